import { describe, expect, it } from 'vitest';
import { WorkflowError, parseStrictJson } from '../src/index.js';
import { JSON_OBJECT_PROTOTYPE } from '../src/json-value.js';

// The parser's own table (duplicate keys, surrogates, UTF-8, depth, size, numbers, __proto__) lives in
// packages/strict-json/test; this file checks the defaults and that each failure becomes this package's code.
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('parseStrictJson', () => {
  it('parses from bytes and from a string', () => {
    const text = ' {"a":[1,-2.5,3e2,true,false,null],"b":"x\\u00e9\\n\\"","c":{}} ';
    const expected = { a: [1, -2.5, 300, true, false, null], b: 'xé\n"', c: {} };
    expect(parseStrictJson(text)).toEqual(expected);
    expect(parseStrictJson(enc(text))).toEqual(expected);
  });

  it('S4: returns objects on the frozen JSON prototype, __proto__ and constructor kept as data keys', () => {
    const v = parseStrictJson('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(v)).toBe(JSON_OBJECT_PROTOTYPE);
    expect(Object.getPrototypeOf(v['__proto__'])).toBe(JSON_OBJECT_PROTOTYPE);
    expect(Object.getPrototypeOf(JSON_OBJECT_PROTOTYPE)).toBeNull();
    expect(Object.isFrozen(JSON_OBJECT_PROTOTYPE)).toBe(true);
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it.each([
    ['{"a":1,"\\u0061":2}', 'WORKFLOW_JSON_DUPLICATE_KEY', 'S65'],
    ['"\\udc00x"', 'WORKFLOW_JSON_LONE_SURROGATE', 'S66'],
    [new Uint8Array([0x22, 0xc3, 0x28, 0x22]), 'WORKFLOW_JSON_BAD_UTF8', 'S67'],
    ['['.repeat(65) + ']'.repeat(65), 'WORKFLOW_JSON_TOO_DEEP', 'S3'],
    ['{"size":9007199254740993}', 'WORKFLOW_JSON_BAD_NUMBER', 'S68'],
    ['[1,]', 'WORKFLOW_JSON_INVALID', 'RFC 8259'],
    ['\ufeff{}', 'WORKFLOW_JSON_INVALID', 'byte order mark'],
  ] as const)('maps the input %j to %s (%s)', (input, code, _why) => {
    expect(() => parseStrictJson(input)).toThrowCode(WorkflowError, code);
  });

  it('uses 64 levels and 8 MiB by default, and honours both options', () => {
    expect(parseStrictJson('['.repeat(64) + ']'.repeat(64))).toBeDefined();
    expect(() => parseStrictJson('[[1]]', { maxDepth: 1 })).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_DEEP',
    );
    expect(() => parseStrictJson(new Uint8Array(8 * 1024 * 1024 + 1))).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_LARGE',
    );
    expect(() => parseStrictJson('"ééé"', { maxBytes: 7 })).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_LARGE',
    );
  });

  it('reports a position and a pointer detail but never the offending text', () => {
    try {
      parseStrictJson('{"keyHex": secretvalue}');
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toContain('secretvalue');
      expect((e as Error).message).toMatch(/character \d+/);
      expect((e as WorkflowError).details).toEqual({
        errors: [{ pointer: '', detail: 'unexpected character, expected a JSON value' }],
      });
    }
  });
});
