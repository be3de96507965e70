import { describe, expect, it } from 'vitest';
import {
  CryptoError,
  decodeBase64,
  decodeHex,
  decodeUtf8,
  encodeBase64,
  encodeHex,
  encodeUtf8,
} from '../src/index.js';
import { offsetView, thrownBy } from '@org/test-utils';

const KEY_HEX = '0f'.repeat(32);

describe('decodeHex', () => {
  it('decodes lowercase, uppercase and mixed case to the same bytes', () => {
    const lower = 'deadbeef00ff';
    expect(decodeHex(lower)).toEqual(new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0x00, 0xff]));
    expect(decodeHex(lower.toUpperCase())).toEqual(decodeHex(lower));
    expect(decodeHex('DeAdBeEf00Ff')).toEqual(decodeHex(lower));
  });

  it('decodes the empty string to zero bytes', () => {
    expect(decodeHex('')).toEqual(new Uint8Array(0));
  });

  it('decodes a 64-character key when 32 bytes are expected', () => {
    expect(decodeHex(KEY_HEX, 32)).toEqual(new Uint8Array(32).fill(0x0f));
  });

  it('rejects an odd length (63 characters) with CRYPTO_BAD_HEX', () => {
    expect(() => decodeHex(KEY_HEX.slice(1), 32)).toThrowCode(CryptoError, 'CRYPTO_BAD_HEX');
    expect(() => decodeHex('abc')).toThrowCode(CryptoError, 'CRYPTO_BAD_HEX');
  });

  it('rejects a non-hex character (...0fg...) with CRYPTO_BAD_HEX, never a shorter key', () => {
    const bad = `${'0f'.repeat(10)}0fg${'f0'.repeat(20)}0`;
    expect(bad).toHaveLength(64);
    expect(() => decodeHex(bad, 32)).toThrowCode(CryptoError, 'CRYPTO_BAD_HEX');
    expect(() => decodeHex(bad)).toThrowCode(CryptoError, 'CRYPTO_BAD_HEX');
  });

  it.each([
    ['a space', '0f 0'],
    ['a 0x prefix', '0x0f'],
    ['a trailing newline', '0f0f\n'],
    ['a sign', '-0f0'],
    ['a full-width digit', '０f'],
    ['a NUL', '0f\u00000'],
  ])('rejects %s with CRYPTO_BAD_HEX', (_name, text) => {
    expect(() => decodeHex(text)).toThrowCode(CryptoError, 'CRYPTO_BAD_HEX');
  });

  it.each([62, 66])(
    'rejects valid hex of %i characters for a 32-byte key with CRYPTO_BAD_KEY_LENGTH',
    (n) => {
      const text = 'ab'.repeat(n / 2);
      expect(() => decodeHex(text, 32, 'key "k1"')).toThrowCode(CryptoError, 'CRYPTO_BAD_KEY_LENGTH');
      const err = thrownBy(() => decodeHex(text, 32, 'key "k1"')) as CryptoError;
      expect(err.message).toContain('key "k1"');
      expect(err.message).toContain('64');
      expect(err.message).not.toContain(text);
      expect(err.details).toEqual({ expectedHexLength: 64, actualHexLength: n });
    },
  );

  it('throws TypeError for a non-string (caller bug)', () => {
    expect(() => decodeHex(42 as unknown as string)).toThrow(TypeError);
  });
});

describe('encodeHex', () => {
  it('writes lowercase only', () => {
    expect(encodeHex(new Uint8Array([0xde, 0xad, 0xbe, 0xef]))).toBe('deadbeef');
  });

  it('encodes only the bytes of a view with a non-zero byteOffset (S118)', () => {
    const bytes = new Uint8Array([1, 2, 0xab]);
    expect(encodeHex(offsetView(bytes))).toBe('0102ab');
    expect(encodeHex(Buffer.from([1, 2, 0xab]))).toBe('0102ab');
  });
});

describe('decodeBase64', () => {
  it('decodes canonical padded standard Base64', () => {
    expect(decodeBase64('')).toEqual(new Uint8Array(0));
    expect(decodeBase64('YQ==')).toEqual(new Uint8Array([0x61]));
    expect(decodeBase64('YWI=')).toEqual(new Uint8Array([0x61, 0x62]));
    expect(decodeBase64('YWJj')).toEqual(new Uint8Array([0x61, 0x62, 0x63]));
    expect(decodeBase64('+/+/')).toEqual(new Uint8Array([0xfb, 0xff, 0xbf]));
  });

  it.each([
    ['an inner space', 'YW Jj'],
    ['a newline', 'YWJj\nYWJj'],
    ['a trailing newline', 'YWJj\n'],
    ['a leading space', ' YWJj'],
    ['!!!!', 'YWJj!!!!'],
    ['URL-safe "-"', 'YW-j'],
    ['URL-safe "_"', 'YW_j'],
    ['missing padding (YWI)', 'YWI'],
    ['missing padding (YQ)', 'YQ'],
    ['short padding (YQ=)', 'YQ='],
    ['extra padding (YWI==)', 'YWI=='],
    ['padding only', '===='],
    ['padding in the middle', 'YQ==YWJj'],
    ['a single character', 'Y'],
    ['non-zero trailing bits (YWK=)', 'YWK='],
    ['non-zero trailing bits (YR==)', 'YR=='],
    ['a tab', 'YWJj\t'],
  ])('rejects %s with CRYPTO_BAD_BASE64', (_name, text) => {
    expect(() => decodeBase64(text)).toThrowCode(CryptoError, 'CRYPTO_BAD_BASE64');
  });

  it('accepts YWI=, the canonical form of YWK=', () => {
    expect(encodeBase64(decodeBase64('YWI='))).toBe('YWI=');
  });

  it('names the value in the message', () => {
    const err = thrownBy(() => decodeBase64('!!!!', 'bootstrap text')) as CryptoError;
    expect(err.message).toContain('bootstrap text');
    expect(err.message).not.toContain('!!!!');
  });

  it('throws TypeError for a non-string (caller bug)', () => {
    expect(() => decodeBase64(null as unknown as string)).toThrow(TypeError);
  });
});

describe('encodeBase64', () => {
  it('writes padded standard Base64 of a view (S118)', () => {
    expect(encodeBase64(offsetView(new Uint8Array([0xfb, 0xff])))).toBe('+/8=');
  });
});

describe('decodeUtf8', () => {
  it('decodes valid UTF-8, including 4-byte sequences', () => {
    expect(decodeUtf8(new Uint8Array([0x61, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]))).toBe('aé😀');
  });

  it('keeps a leading BOM as U+FEFF', () => {
    expect(decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]))).toBe('\ufeffa');
  });

  it.each([
    ['C3 28 (bad continuation)', [0xc3, 0x28]],
    ['a lone continuation byte', [0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong "/"', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['0xFF', [0xff]],
  ])('rejects %s with CRYPTO_BAD_UTF8, never U+FFFD', (_name, bytes) => {
    expect(() => decodeUtf8(new Uint8Array(bytes))).toThrowCode(CryptoError, 'CRYPTO_BAD_UTF8');
  });

  it('decodes only the bytes of a view (S118)', () => {
    expect(decodeUtf8(offsetView(new Uint8Array([0x68, 0x69])))).toBe('hi');
  });
});

describe('encodeUtf8', () => {
  it('encodes well-formed text', () => {
    expect(encodeUtf8('aé😀')).toEqual(new Uint8Array([0x61, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]));
  });

  it.each([
    ['a lone high surrogate', 'a\ud800b'],
    ['a lone low surrogate', '\udc00'],
    ['reversed surrogates', '\ude00\ud83d'],
  ])('rejects %s with CRYPTO_BAD_UTF8', (_name, text) => {
    expect(() => encodeUtf8(text)).toThrowCode(CryptoError, 'CRYPTO_BAD_UTF8');
  });
});
