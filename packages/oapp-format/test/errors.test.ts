import { describe, expect, it } from 'vitest';
import { OAPP_ERROR_CODES, OappError, isOappError } from '../src/index.js';

describe('OappError', () => {
  it('carries a code, a name equal to the class name, details and a cause', () => {
    const cause = new Error('inner');
    const e = new OappError('FORMAT_TRUNCATED', 'cut', { cause, details: { at: 3 } });
    expect(e).toMatchObject({
      name: 'OappError',
      code: 'FORMAT_TRUNCATED',
      message: 'cut',
      details: { at: 3 },
      cause,
    });
  });
  it('isOappError recognises copies by name and code, not by instanceof', () => {
    expect(isOappError({ name: 'OappError', code: 'CRYPTO_AUTH_FAILED' })).toBe(true);
    expect(isOappError({ name: 'OappError', code: 'NOT_A_CODE' })).toBe(false);
    expect(isOappError(new Error('x'))).toBe(false);
    expect(isOappError(null)).toBe(false);
  });
  it('codes are unique, prefixed and UPPER_SNAKE', () => {
    expect(new Set(OAPP_ERROR_CODES).size).toBe(OAPP_ERROR_CODES.length);
    for (const c of OAPP_ERROR_CODES) expect(c).toMatch(/^(FORMAT|CRYPTO|POLICY)_[A-Z0-9_]+$/);
  });
});
