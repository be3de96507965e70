import { describe, expect, it } from 'vitest';
import { WorkflowError, canonicalize, parseStrictJson } from '../src/index.js';

describe('canonicalize', () => {
  it('sorts members by UTF-16 code units and drops whitespace (RFC 8785 §3.2.3 example)', () => {
    const input = parseStrictJson(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('writes numbers in the ECMAScript form (RFC 8785 §3.2.2.3)', () => {
    expect(canonicalize([333333333.3333333, 1.5e-7, 4.5, 0.002, 1e-27, -0, 0, 100])).toBe(
      '[333333333.3333333,1.5e-7,4.5,0.002,1e-27,0,0,100]',
    );
  });

  it('escapes strings as JSON.stringify does (RFC 8785 §3.2.2.2)', () => {
    expect(canonicalize({ s: '\u0000\u001f"\\/\u007f\u2028é' })).toBe(
      '{"s":"\\u0000\\u001f\\"\\\\/\u007f\u2028é"}',
    );
  });

  it('is independent of member order', () => {
    expect(canonicalize({ b: 1, a: { d: [1, { z: 0, y: 1 }], c: null } })).toBe(
      canonicalize({ a: { c: null, d: [1, { y: 1, z: 0 }] }, b: 1 }),
    );
  });

  it.each([
    ['undefined', { a: undefined }],
    ['function', [() => 1]],
    ['NaN', { n: NaN }],
    ['Infinity', { n: Infinity }],
    ['unsafe integer', { n: 2 ** 53 }],
    ['lone surrogate', { s: '\ud800' }],
    ['Date', { d: new Date(0) }],
    ['Map', { m: new Map() }],
    ['bigint', { b: 1n }],
  ] as [string, unknown][])('rejects a value holding %s with WORKFLOW_VALUE_INVALID', (_label, value) => {
    expect(() => canonicalize(value)).toThrowCode(WorkflowError, 'WORKFLOW_VALUE_INVALID');
  });

  it('rejects cycles and excessive depth with WORKFLOW_JSON_TOO_DEEP', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => canonicalize(cyclic)).toThrowCode(WorkflowError, 'WORKFLOW_JSON_TOO_DEEP');
  });
});
