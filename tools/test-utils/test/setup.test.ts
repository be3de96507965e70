import { describe, expect, it } from 'vitest';
import { byteByByte, detailsShapeProblem, loadNegativeCorpus, offsetView } from '../src/index.js';

class DemoError extends Error {
  override readonly name = 'DemoError';
  constructor(readonly code: string) {
    super(code);
  }
}

describe('toThrowCode', () => {
  it('passes on the right class and code', () => {
    expect(() => {
      throw new DemoError('DEMO_X');
    }).toThrowCode(DemoError, 'DEMO_X');
  });
  it('fails on another code, a plain error and no error', () => {
    expect(() =>
      expect(() => {
        throw new DemoError('DEMO_Y');
      }).toThrowCode(DemoError, 'DEMO_X'),
    ).toThrow(/DEMO_Y/);
    expect(() =>
      expect(() => {
        throw new TypeError('boom');
      }).toThrowCode(DemoError, 'DEMO_X'),
    ).toThrow(/TypeError/);
    expect(() => expect(() => 1).toThrowCode(DemoError, 'DEMO_X')).toThrow(/nothing was thrown/);
  });
  it('handles rejected promises', async () => {
    await expect(Promise.reject(new DemoError('DEMO_Z'))).rejects.toThrowCode(DemoError, 'DEMO_Z');
    await expect(Promise.reject(new DemoError('DEMO_Z'))).rejects.toThrowCode('DemoError', 'DEMO_Z');
  });
});

describe('helpers', () => {
  it('byteByByte yields single bytes and offsetView keeps the content', () => {
    const b = new Uint8Array([1, 2, 3]);
    expect([...byteByByte(b)].map((x) => x.length)).toEqual([1, 1, 1]);
    const v = offsetView(b);
    expect(v.byteOffset).toBeGreaterThan(0);
    expect([...v]).toEqual([1, 2, 3]);
  });
  it('loadNegativeCorpus reads nothing from an empty folder', () => {
    expect(loadNegativeCorpus(new URL('.', import.meta.url).pathname)).toEqual([]);
  });
});

describe('detailsShapeProblem', () => {
  const withDetails = (details: unknown) => Object.assign(new DemoError('DEMO_X'), { details });
  it('accepts no details and plain records, with or without a well-formed errors list', () => {
    expect(detailsShapeProblem(new DemoError('DEMO_X'))).toBeUndefined();
    expect(detailsShapeProblem(withDetails({ keyId: 'k' }))).toBeUndefined();
    expect(
      detailsShapeProblem(withDetails(Object.assign(Object.create(null) as object, { a: 1 }))),
    ).toBeUndefined();
    expect(detailsShapeProblem(withDetails({ errors: [{ pointer: '/a', detail: 'x' }] }))).toBeUndefined();
  });
  it('names arrays, non-objects, class instances and malformed errors lists', () => {
    expect(detailsShapeProblem(withDetails([{ pointer: '/a', detail: 'x' }]))).toBe('details is an array');
    expect(detailsShapeProblem(withDetails('text'))).toBe('details is string');
    expect(detailsShapeProblem(withDetails(null))).toBe('details is null');
    expect(detailsShapeProblem(withDetails(new Map()))).toBe('details is not a plain object');
    expect(detailsShapeProblem(withDetails({ errors: { pointer: '/a' } }))).toBe(
      'details.errors is not an array',
    );
    expect(detailsShapeProblem(withDetails({ errors: [{ pointer: '/a' }] }))).toBe(
      'details.errors[0] is not { pointer, detail }',
    );
  });
});
