import { describe, expect, it } from 'vitest';
import { STRICT_JSON_ERROR_CODES, StrictJsonError, isStrictJsonError } from '../src/index.js';

describe('isStrictJsonError', () => {
  it('accepts every listed code and refuses unknown codes, other names and non-objects', () => {
    for (const code of STRICT_JSON_ERROR_CODES)
      expect(isStrictJsonError(new StrictJsonError(code, 'x', 0))).toBe(true);
    expect(isStrictJsonError({ name: 'StrictJsonError', code: 'JSON_NOPE' })).toBe(false);
    expect(isStrictJsonError({ name: 'OappError', code: 'JSON_INVALID' })).toBe(false);
    expect(isStrictJsonError(null)).toBe(false);
    expect(isStrictJsonError('JSON_INVALID')).toBe(false);
  });
  it('has a frozen code list', () => {
    expect(Object.isFrozen(STRICT_JSON_ERROR_CODES)).toBe(true);
  });
});
