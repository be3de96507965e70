import { describe, expect, it } from 'vitest';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';
import {
  STRICT_JSON_ERROR_CODES,
  StrictJsonError,
  isStrictJsonError,
  parseStrictJson,
} from '../src/index.js';

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

describe('StrictJsonError details (one shape across packages)', () => {
  it('are a plain object, never an array, on real failures', () => {
    const errors = [
      thrownBy(() => parseStrictJson('{"a":1,"a":2}', { maxBytes: 64 })),
      thrownBy(() => parseStrictJson('[1,', { maxBytes: 64 })),
    ];
    for (const err of errors) {
      expect(isStrictJsonError(err)).toBe(true);
      expect(detailsShapeProblem(err)).toBeUndefined();
    }
  });
});
