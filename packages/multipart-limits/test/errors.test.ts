import { describe, expect, it } from 'vitest';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';
import { checkUploadHeaders, UploadError, isUploadError, UPLOAD_ERROR_CODES } from '../src/index.js';
import { excerpt } from '../src/internal/excerpt.js';

describe('UploadError', () => {
  it('carries its code, cause and details, and its name equals the class name', () => {
    const cause = new Error('inner');
    const e = new UploadError('UPLOAD_MISSING_PART', 'the form has no stream part', {
      cause,
      details: { parts: ['stream'] },
    });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('UploadError');
    expect(e.code).toBe('UPLOAD_MISSING_PART');
    expect(e.cause).toBe(cause);
    expect(e.details).toEqual({ parts: ['stream'] });
    expect(() => {
      throw e;
    }).toThrowCode(UploadError, 'UPLOAD_MISSING_PART');
  });

  it('is recognised by a duck-typed guard, also across copies of the package', () => {
    expect(isUploadError(new UploadError('UPLOAD_MALFORMED', 'x'))).toBe(true);
    expect(isUploadError({ name: 'UploadError', code: 'UPLOAD_MALFORMED' })).toBe(true);
    expect(isUploadError({ name: 'UploadError', code: 'FORMAT_X' })).toBe(false);
    expect(isUploadError(new Error('x'))).toBe(false);
    expect(isUploadError(null)).toBe(false);
  });
});

describe('excerpt', () => {
  it('quotes, escapes and shortens attacker text for messages', () => {
    expect(excerpt('__proto__')).toBe('"__proto__"');
    expect(excerpt('a\r\nb\u0000é')).toBe('"a\\r\\nb\\u0000\\u00e9"');
    expect(excerpt('x'.repeat(100))).toBe(`"${'x'.repeat(24)}..."`);
  });
});

describe('isUploadError (code-list membership)', () => {
  it('accepts every code of the frozen UPLOAD_ERROR_CODES, also from another loaded copy', () => {
    expect(Object.isFrozen(UPLOAD_ERROR_CODES)).toBe(true);
    for (const code of UPLOAD_ERROR_CODES) expect(isUploadError(new UploadError(code, 'm'))).toBe(true);
    expect(isUploadError({ name: 'UploadError', code: UPLOAD_ERROR_CODES[0], message: 'm' })).toBe(true);
  });
  it('refuses an unknown code with the right prefix, another class name and non-objects', () => {
    const prefix = UPLOAD_ERROR_CODES[0].split('_')[0]!;
    expect(isUploadError({ name: 'UploadError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isUploadError({ name: 'Error', code: UPLOAD_ERROR_CODES[0] })).toBe(false);
    expect(isUploadError(null)).toBe(false);
    expect(isUploadError(UPLOAD_ERROR_CODES[0])).toBe(false);
  });
});

describe('UploadError details', () => {
  it('are a record of non-secret facts, the shape every package uses', () => {
    const e = new UploadError('UPLOAD_BODY_TOO_LARGE', 'too large', { details: { limit: 10 } });
    expect(e.details).toEqual({ limit: 10 });
    expect(new UploadError('UPLOAD_ABORTED', 'aborted').details).toBeUndefined();
  });
});

describe('UploadError details (one shape across packages)', () => {
  it('are a plain object, never an array, on real failures', () => {
    const errors = [
      thrownBy(() => checkUploadHeaders({ 'content-type': 'image/png' })),
      thrownBy(() =>
        checkUploadHeaders({ 'content-type': 'application/json', 'content-length': '999999999999' }),
      ),
    ];
    for (const err of errors) {
      expect(isUploadError(err)).toBe(true);
      expect((err as UploadError).details).toBeDefined();
      expect(detailsShapeProblem(err)).toBeUndefined();
    }
  });
});
