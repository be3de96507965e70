import { describe, expect, it } from 'vitest';
import { JSON_OBJECT_PROTOTYPE, WorkflowError } from '../src/index.js';
import { describeValue, toJsonValue, toPointer } from '../src/json-value.js';

describe('toJsonValue', () => {
  it('copies plain JSON into objects that inherit nothing', () => {
    const input = { a: [1, { b: null }], c: 'x', d: true };
    const out = toJsonValue(input) as Record<string, unknown>;
    expect(out).toEqual(input);
    expect(out).not.toBe(input);
    expect(Object.getPrototypeOf(out)).toBe(JSON_OBJECT_PROTOTYPE);
  });

  it('keeps an own __proto__ member (as JSON.parse creates it) as data, without touching prototypes (S4)', () => {
    const hostile = JSON.parse(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
    ) as unknown;
    const out = toJsonValue(hostile) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(out)).toBe(JSON_OBJECT_PROTOTYPE);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each([
    ['undefined', { a: undefined }],
    ['a function', { f: () => 1 }],
    ['a symbol', { s: Symbol('x') }],
    ['NaN', [NaN]],
    ['an unsafe integer', [2 ** 60]],
    ['a lone surrogate', ['\udc00']],
    ['a class instance', [new (class Point {})()]],
  ] as [string, unknown][])('rejects %s with WORKFLOW_VALUE_INVALID and a pointer', (_label, value) => {
    expect(() => toJsonValue(value)).toThrowCode(WorkflowError, 'WORKFLOW_VALUE_INVALID');
  });

  it('rejects a cycle with WORKFLOW_JSON_TOO_DEEP instead of recursing forever', () => {
    const a: unknown[] = [];
    a.push(a);
    expect(() => toJsonValue(a)).toThrowCode(WorkflowError, 'WORKFLOW_JSON_TOO_DEEP');
  });
});

describe('describeValue', () => {
  it('describes by type and size, never by content', () => {
    expect(['secret', 42, null, [1, 2], {}, true].map(describeValue)).toEqual([
      'string of length 6',
      'number',
      'null',
      'array of 2',
      'object',
      'boolean',
    ]);
  });
});

describe('toPointer', () => {
  it('escapes ~ and / (RFC 6901)', () => {
    expect(toPointer(['a/b', 'c~d', 0])).toBe('/a~1b/c~0d/0');
    expect(toPointer([])).toBe('');
  });
});
