import { describe, expect, it } from 'vitest';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { createSha256, hkdfSha256, sha256 } from '../src/index.js';
import { byteByByte, chunked, hex, offsetView, unhex } from '@org/test-utils';
import { LENGTHS, fill } from './sodium.js';

// FIPS 180-2 examples (Appendix B.1) and the empty string.
const SHA256_VECTORS: [string, string][] = [
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  [
    'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  ],
];

describe('sha256', () => {
  it.each(SHA256_VECTORS)('hashes %j to the FIPS 180-2 digest', (text, digest) => {
    expect(hex(sha256(new TextEncoder().encode(text)))).toBe(digest);
  });

  it('equals the noble reference for many lengths and hashes only the bytes of a view (S118)', () => {
    for (const n of LENGTHS.filter((l) => l <= 4097)) {
      const m = fill(n, n + 1);
      const ref = nobleSha256(m);
      expect(sha256(m)).toEqual(ref);
      expect(sha256(offsetView(m))).toEqual(ref);
    }
  });

  it('throws TypeError for a string (caller bug)', () => {
    expect(() => sha256('abc' as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe('createSha256', () => {
  it('gives the same digest whole, chunked and byte by byte', () => {
    const m = fill(1000, 7);
    const whole = sha256(m);
    expect(createSha256().update(m).digest()).toEqual(whole);
    for (const size of [1, 63, 64, 65, 999]) {
      const h = createSha256();
      for (const c of chunked(m, size)) h.update(c);
      expect(h.digest()).toEqual(whole);
    }
    const h = createSha256();
    for (const c of byteByByte(m)) h.update(c);
    expect(h.digest()).toEqual(whole);
  });

  it('hashes nothing to the empty-string digest', () => {
    expect(hex(createSha256().digest())).toBe(SHA256_VECTORS[0]![1]);
  });
});

describe('hkdfSha256', () => {
  // RFC 5869 Appendix A.1 (test case 1) and A.3 (test case 3: empty salt and info).
  it('reproduces RFC 5869 test case 1', () => {
    const okm = hkdfSha256(
      unhex('0b'.repeat(22)),
      unhex('000102030405060708090a0b0c'),
      unhex('f0f1f2f3f4f5f6f7f8f9'),
      42,
    );
    expect(hex(okm)).toBe(
      '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
    );
  });

  it('reproduces RFC 5869 test case 3 (empty salt and info)', () => {
    const okm = hkdfSha256(unhex('0b'.repeat(22)), new Uint8Array(0), new Uint8Array(0), 42);
    expect(hex(okm)).toBe(
      '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8',
    );
  });

  it('derives only from the bytes of views (S118)', () => {
    const ikm = fill(32, 1);
    const salt = fill(16, 2);
    const info = fill(8, 3);
    expect(hkdfSha256(offsetView(ikm), offsetView(salt), offsetView(info), 32)).toEqual(
      hkdfSha256(ikm, salt, info, 32),
    );
  });

  it('throws TypeError for a string ikm (caller bug)', () => {
    expect(() => hkdfSha256('k' as unknown as Uint8Array, new Uint8Array(0), new Uint8Array(0), 32)).toThrow(
      TypeError,
    );
  });
});
