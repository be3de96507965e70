import { beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from './engines.js';
import {
  AEAD_KEY_BYTES,
  AEAD_NONCE_BYTES,
  AEAD_TAG_BYTES,
  CryptoError,
  aeadDecrypt,
  aeadEncrypt,
  aeadEncryptInto,
} from '../src/index.js';
import { hex, offsetView, unhex } from '@org/test-utils';
import { fill, loadSodium } from './sodium.js';

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

// RFC 8439 §2.8.2, the AEAD_CHACHA20_POLY1305 example.
const RFC = {
  key: unhex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f'),
  nonce: unhex('070000004041424344454647'),
  aad: unhex('50515253c0c1c2c3c4c5c6c7'),
  plaintext: new TextEncoder().encode(
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  ),
  ciphertextPrefix: 'd31a8d34648e60db7b86afbc53ef7ec2',
  tag: '1ae10b594f09e26a7e902ecbd0600691',
};

describe('aeadEncrypt', () => {
  it.each(ENGINES)('reproduces the RFC 8439 §2.8.2 example (%s)', (engine) => {
    const sealed = aeadEncrypt(RFC.key, RFC.nonce, RFC.plaintext, RFC.aad, engine);
    expect(sealed).toHaveLength(RFC.plaintext.length + AEAD_TAG_BYTES);
    expect(hex(sealed.subarray(0, 16))).toBe(RFC.ciphertextPrefix);
    expect(hex(sealed.subarray(-16))).toBe(RFC.tag);
    expect(aeadDecrypt(RFC.key, RFC.nonce, sealed, RFC.aad, engine)).toEqual(RFC.plaintext);
  });

  it('gives identical output for views and pooled Buffers (S118) on every engine', () => {
    const key = fill(AEAD_KEY_BYTES, 1);
    const nonce = fill(AEAD_NONCE_BYTES, 2);
    const m = fill(70, 3);
    const aad = fill(9, 4);
    const ref = sodium.crypto_aead_chacha20poly1305_ietf_encrypt(m, aad, null, nonce, key);
    for (const engine of ENGINES) {
      expect(
        aeadEncrypt(offsetView(key), offsetView(nonce, 3), offsetView(m, 1), offsetView(aad, 2), engine),
      ).toEqual(ref);
      expect(
        aeadEncrypt(Buffer.from(key), Buffer.from(nonce), Buffer.from(m), Buffer.from(aad), engine),
      ).toEqual(ref);
      expect(
        aeadDecrypt(offsetView(key), offsetView(nonce), offsetView(ref, 5), offsetView(aad), engine),
      ).toEqual(m);
    }
  });

  it('throws RangeError for a 24-byte nonce or a 16-byte key (caller bugs)', () => {
    expect(() => aeadEncrypt(fill(32, 1), fill(24, 1), fill(1, 1))).toThrow(RangeError);
    expect(() => aeadEncrypt(fill(16, 1), fill(12, 1), fill(1, 1))).toThrow(RangeError);
    expect(() => aeadEncrypt(fill(32, 1), fill(12, 1), 'x' as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe('aeadEncryptInto', () => {
  it.each(ENGINES)('writes the bytes of aeadEncrypt at the offset and nothing else (%s)', (engine) => {
    for (const len of [0, 1, 70, 65_536]) {
      const m = fill(len, 20);
      const out = new Uint8Array(len + AEAD_TAG_BYTES + 10).fill(0xee);
      expect(aeadEncryptInto(RFC.key, RFC.nonce, m, out, 3, RFC.aad, engine)).toBe(len + AEAD_TAG_BYTES);
      expect(out.subarray(3, 3 + len + AEAD_TAG_BYTES)).toEqual(
        aeadEncrypt(RFC.key, RFC.nonce, m, RFC.aad, engine),
      );
      expect([...out.subarray(0, 3), ...out.subarray(3 + len + AEAD_TAG_BYTES)]).toEqual(
        new Array(10).fill(0xee),
      );
    }
  });

  it('throws RangeError when out has no room at the offset (caller bug)', () => {
    const m = fill(10, 21);
    expect(() => aeadEncryptInto(RFC.key, RFC.nonce, m, new Uint8Array(26), 1)).toThrow(RangeError);
    expect(() => aeadEncryptInto(RFC.key, RFC.nonce, m, new Uint8Array(26), -1)).toThrow(RangeError);
    expect(() => aeadEncryptInto(RFC.key, RFC.nonce, m, new Uint8Array(26), 0.5)).toThrow(RangeError);
    expect(aeadEncryptInto(RFC.key, RFC.nonce, m, new Uint8Array(26), 0)).toBe(26);
  });
});

describe('aeadDecrypt', () => {
  it.each(ENGINES)('returns a plaintext whose buffer holds exactly the plaintext (%s)', (engine) => {
    for (const len of [0, 5, 5000, 65_536]) {
      const sealed = aeadEncrypt(RFC.key, RFC.nonce, fill(len, 22), undefined, engine);
      const plain = aeadDecrypt(RFC.key, RFC.nonce, sealed, undefined, engine);
      expect(plain).toEqual(fill(len, 22));
      expect(Buffer.isBuffer(plain)).toBe(false);
      if (engine !== 'js') expect([plain.byteOffset, plain.buffer.byteLength]).toEqual([0, len]);
    }
  });

  it.each(ENGINES)(
    'rejects every single-byte flip of a short sealed value with CRYPTO_AUTH_FAILED (%s)',
    (engine) => {
      const key = fill(32, 5);
      const nonce = fill(12, 6);
      const sealed = aeadEncrypt(key, nonce, fill(4, 7), fill(3, 8), engine);
      for (let i = 0; i < sealed.length; i++) {
        const bad = sealed.slice();
        bad[i]! ^= 1 << (i % 8);
        expect(() => aeadDecrypt(key, nonce, bad, fill(3, 8), engine)).toThrowCode(
          CryptoError,
          'CRYPTO_AUTH_FAILED',
        );
      }
    },
  );

  it.each(ENGINES)('rejects wrong associated data, key or nonce with CRYPTO_AUTH_FAILED (%s)', (engine) => {
    const key = fill(32, 9);
    const nonce = fill(12, 10);
    const sealed = aeadEncrypt(key, nonce, fill(50, 11), fill(5, 12), engine);
    expect(() => aeadDecrypt(key, nonce, sealed, fill(5, 13), engine)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    expect(() => aeadDecrypt(key, nonce, sealed, undefined, engine)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    expect(() => aeadDecrypt(fill(32, 14), nonce, sealed, fill(5, 12), engine)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    expect(() => aeadDecrypt(key, fill(12, 15), sealed, fill(5, 12), engine)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
  });

  it.each(ENGINES)(
    'rejects inputs shorter than the tag and truncations with CRYPTO_AUTH_FAILED (%s)',
    (engine) => {
      const key = fill(32, 16);
      const nonce = fill(12, 17);
      const sealed = aeadEncrypt(key, nonce, fill(20, 18), undefined, engine);
      for (const n of [0, 1, 15, 16, 17, sealed.length - 1]) {
        expect(() => aeadDecrypt(key, nonce, sealed.subarray(0, n), undefined, engine)).toThrowCode(
          CryptoError,
          'CRYPTO_AUTH_FAILED',
        );
      }
    },
  );

  it.each(ENGINES)('opens an empty plaintext (tag only) made by libsodium (%s)', (engine) => {
    const key = fill(32, 19);
    const nonce = fill(12, 20);
    const ref = sodium.crypto_aead_chacha20poly1305_ietf_encrypt(new Uint8Array(0), null, null, nonce, key);
    expect(aeadDecrypt(key, nonce, ref, undefined, engine)).toEqual(new Uint8Array(0));
  });
});
