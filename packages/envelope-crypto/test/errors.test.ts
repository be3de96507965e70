import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';
import { CRYPTO_ERROR_CODES, CryptoError, decodeHex, isCryptoError, parseKeyTuple } from '../src/index.js';

describe('CRYPTO_ERROR_CODES', () => {
  it('are unique UPPER_SNAKE codes with the CRYPTO_ prefix', () => {
    expect(new Set(CRYPTO_ERROR_CODES).size).toBe(CRYPTO_ERROR_CODES.length);
    for (const code of CRYPTO_ERROR_CODES) expect(code).toMatch(/^CRYPTO_[A-Z0-9]+(?:_[A-Z0-9]+)*$/);
  });

  it('are each listed in the README error-code table', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const code of CRYPTO_ERROR_CODES) expect(readme).toMatch(new RegExp(`^\\| +\`${code}\` +\\|`, 'm'));
  });
});

describe('CryptoError', () => {
  it('carries name, code, message, details and cause', () => {
    const cause = new Error('inner');
    const err = new CryptoError('CRYPTO_BAD_HEX', 'key "a" is not hex', { cause, details: { keyId: 'a' } });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('CryptoError');
    expect(err.code).toBe('CRYPTO_BAD_HEX');
    expect(err.message).toBe('key "a" is not hex');
    expect(err.details).toEqual({ keyId: 'a' });
    expect(err.cause).toBe(cause);
    expect(String(err)).toBe('CryptoError: key "a" is not hex');
  });

  it('has undefined details when none are given', () => {
    expect(new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed').details).toBeUndefined();
  });

  it('is matched by toThrowCode', () => {
    expect(() => {
      throw new CryptoError('CRYPTO_TRUNCATED', 'short');
    }).toThrowCode(CryptoError, 'CRYPTO_TRUNCATED');
  });
});

describe('isCryptoError', () => {
  it('recognises a CryptoError and a duck-typed copy from another package instance', () => {
    expect(isCryptoError(new CryptoError('CRYPTO_WEAK_KEY', 'weak'))).toBe(true);
    const copy = Object.assign(new Error('weak'), { name: 'CryptoError', code: 'CRYPTO_WEAK_KEY' });
    expect(isCryptoError(copy)).toBe(true);
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'CRYPTO_WEAK_KEY'],
    ['a plain Error', new Error('x')],
    ['an unknown code', { name: 'CryptoError', code: 'CRYPTO_NOPE' }],
    ['another package error', { name: 'FormatError', code: 'CRYPTO_WEAK_KEY' }],
    ['a numeric code', { name: 'CryptoError', code: 7 }],
  ])('rejects %s', (_name, value) => {
    expect(isCryptoError(value)).toBe(false);
  });
});

describe('isCryptoError (code-list membership)', () => {
  it('accepts every code of the frozen CRYPTO_ERROR_CODES, also from another loaded copy', () => {
    expect(Object.isFrozen(CRYPTO_ERROR_CODES)).toBe(true);
    for (const code of CRYPTO_ERROR_CODES) expect(isCryptoError(new CryptoError(code, 'm'))).toBe(true);
    expect(isCryptoError({ name: 'CryptoError', code: CRYPTO_ERROR_CODES[0], message: 'm' })).toBe(true);
  });
  it('refuses an unknown code with the right prefix, another class name and non-objects', () => {
    const prefix = CRYPTO_ERROR_CODES[0].split('_')[0]!;
    expect(isCryptoError({ name: 'CryptoError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isCryptoError({ name: 'Error', code: CRYPTO_ERROR_CODES[0] })).toBe(false);
    expect(isCryptoError(null)).toBe(false);
    expect(isCryptoError(CRYPTO_ERROR_CODES[0])).toBe(false);
  });
});

describe('CryptoError details (one shape across packages)', () => {
  it('are a plain object, never an array, on real failures', () => {
    const errors = [
      thrownBy(() => decodeHex('abcd', 32, 'key')),
      thrownBy(() => parseKeyTuple('no-slash', 2)),
    ];
    for (const err of errors) {
      expect(isCryptoError(err)).toBe(true);
      expect((err as CryptoError).details).toBeDefined();
      expect(detailsShapeProblem(err)).toBeUndefined();
    }
  });
});
