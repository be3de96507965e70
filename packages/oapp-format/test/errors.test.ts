import { describe, expect, it } from 'vitest';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';
import { OAPP_ERROR_CODES, OappError, isOappError, parseStrictJson } from '../src/index.js';

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

describe('isOappError (code-list membership)', () => {
  it('accepts every code of the frozen OAPP_ERROR_CODES, also from another loaded copy', () => {
    expect(Object.isFrozen(OAPP_ERROR_CODES)).toBe(true);
    for (const code of OAPP_ERROR_CODES) expect(isOappError(new OappError(code, 'm'))).toBe(true);
    expect(isOappError({ name: 'OappError', code: OAPP_ERROR_CODES[0], message: 'm' })).toBe(true);
  });
  it('refuses an unknown code with the right prefix, another class name and non-objects', () => {
    const prefix = OAPP_ERROR_CODES[0].split('_')[0]!;
    expect(isOappError({ name: 'OappError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isOappError({ name: 'Error', code: OAPP_ERROR_CODES[0] })).toBe(false);
    expect(isOappError(null)).toBe(false);
    expect(isOappError(OAPP_ERROR_CODES[0])).toBe(false);
  });
});

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('OappError details (one shape across packages)', () => {
  it('are a plain object, never an array, on real failures', () => {
    const errors = [
      thrownBy(() => parseStrictJson(utf8('{"a":1,"a":2}'), { what: 'HEADER', maxBytes: 64 })),
      thrownBy(() => parseStrictJson(utf8('{"a":}'), { what: 'HEADER', maxBytes: 64 })),
    ];
    for (const err of errors) {
      expect(isOappError(err)).toBe(true);
      expect((err as OappError).details).toBeDefined();
      expect(detailsShapeProblem(err)).toBeUndefined();
    }
  });
});
