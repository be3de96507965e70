import { describe, expect, it } from 'vitest';
import { WorkflowError, parseStrictJson } from '../src/index.js';
import { JSON_OBJECT_PROTOTYPE } from '../src/json-value.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('parseStrictJson', () => {
  it('parses every JSON type from bytes and from a string', () => {
    const text = ' {"a":[1,-2.5,3e2,true,false,null],"b":"x\\u00e9\\n\\"","c":{}} ';
    const expected = { a: [1, -2.5, 300, true, false, null], b: 'xé\n"', c: {} };
    expect(parseStrictJson(text)).toEqual(expected);
    expect(parseStrictJson(enc(text))).toEqual(expected);
  });

  it('keeps surrogate pairs, escaped or literal', () => {
    expect(parseStrictJson('"\\ud83d\\ude00"')).toBe('😀');
    expect(parseStrictJson(enc('"😀"'))).toBe('😀');
  });

  it('returns objects that inherit nothing and keeps __proto__ and constructor as data keys (S4)', () => {
    const v = parseStrictJson('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(v)).toBe(JSON_OBJECT_PROTOTYPE);
    expect(Object.getPrototypeOf(JSON_OBJECT_PROTOTYPE)).toBeNull();
    expect(Object.isFrozen(JSON_OBJECT_PROTOTYPE)).toBe(true);
    expect('toString' in v).toBe(false);
    expect(v['__proto__']).toEqual({ polluted: true });
    expect(v['constructor']).toEqual({ prototype: 1 });
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  it.each([
    ['{"a":1,"a":2}', 'top-level'],
    ['{"x":{"k":1,"k":1}}', 'nested, identical values'],
    ['{"__proto__":1,"__proto__":2}', '__proto__ twice'],
    ['{"a":1,"\\u0061":2}', 'escaped spelling of the same name'],
  ])('rejects duplicate keys (%s, %s) with WORKFLOW_JSON_DUPLICATE_KEY (S65)', (text) => {
    expect(() => parseStrictJson(text)).toThrowCode(WorkflowError, 'WORKFLOW_JSON_DUPLICATE_KEY');
  });

  it('rejects a lone surrogate, escaped or in a string input (S66)', () => {
    expect(() => parseStrictJson('{"packageId":"\\ud800"}')).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_LONE_SURROGATE',
    );
    expect(() => parseStrictJson('"\\udc00x"')).toThrowCode(WorkflowError, 'WORKFLOW_JSON_LONE_SURROGATE');
    expect(() => parseStrictJson('"a\ud800"')).toThrowCode(WorkflowError, 'WORKFLOW_JSON_LONE_SURROGATE');
  });

  it.each([
    [[0x22, 0xc3, 0x28, 0x22], 'C3 28'],
    [[0x22, 0xed, 0xa0, 0x80, 0x22], 'encoded surrogate'],
    [[0x22, 0xc0, 0xaf, 0x22], 'overlong'],
    [[0x22, 0xff, 0x22], 'FF'],
  ])('rejects invalid UTF-8 %j (%s) with WORKFLOW_JSON_BAD_UTF8, never U+FFFD (S67)', (bytes) => {
    expect(() => parseStrictJson(new Uint8Array(bytes))).toThrowCode(WorkflowError, 'WORKFLOW_JSON_BAD_UTF8');
  });

  it('rejects a byte order mark', () => {
    expect(() => parseStrictJson(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_INVALID',
    );
    expect(() => parseStrictJson('\ufeff{}')).toThrowCode(WorkflowError, 'WORKFLOW_JSON_INVALID');
  });

  it('accepts 64 levels of nesting and rejects 65 with WORKFLOW_JSON_TOO_DEEP (S3)', () => {
    expect(parseStrictJson('['.repeat(64) + ']'.repeat(64))).toBeDefined();
    expect(() => parseStrictJson('['.repeat(65) + ']'.repeat(65))).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_DEEP',
    );
    expect(() => parseStrictJson('{"a":'.repeat(65) + '1' + '}'.repeat(65))).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_DEEP',
    );
  });

  it('rejects 100 000 levels of nesting without a stack overflow (S3)', () => {
    expect(() => parseStrictJson('['.repeat(100_000))).toThrowCode(WorkflowError, 'WORKFLOW_JSON_TOO_DEEP');
  });

  it('honours a custom depth cap', () => {
    expect(() => parseStrictJson('[[1]]', { maxDepth: 1 })).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_DEEP',
    );
  });

  it.each(['9007199254740993', '-9007199254740993', '9007199254740992', '1e400', '-1e400', '1e16'])(
    'rejects the number %s with WORKFLOW_JSON_BAD_NUMBER (S68)',
    (n) => {
      expect(() => parseStrictJson(`{"size":${n}}`)).toThrowCode(WorkflowError, 'WORKFLOW_JSON_BAD_NUMBER');
    },
  );

  it('accepts the largest safe integers and ordinary fractions', () => {
    expect(parseStrictJson('[9007199254740991,-9007199254740991,1.5,0.1,-0]')).toEqual([
      9007199254740991, -9007199254740991, 1.5, 0.1, -0,
    ]);
  });

  it('enforces the byte cap on bytes and on strings (counted as UTF-8)', () => {
    expect(() => parseStrictJson(enc('"abcdef"'), { maxBytes: 7 })).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_LARGE',
    );
    expect(parseStrictJson(enc('"abcde"'), { maxBytes: 7 })).toBe('abcde');
    expect(() => parseStrictJson('"ééé"', { maxBytes: 7 })).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_TOO_LARGE',
    );
    expect(parseStrictJson('"éé"', { maxBytes: 7 })).toBe('éé');
  });

  it.each([
    '',
    ' ',
    '{',
    '{"a":1',
    '{"a" 1}',
    '{"a":1,}',
    '[1,]',
    '[1 2]',
    '{a:1}',
    "{'a':1}",
    '01',
    '1.',
    '.5',
    '+1',
    '-',
    'NaN',
    'Infinity',
    'tru',
    'nul',
    '"abc',
    '"a\tb"',
    '"\\x"',
    '"\\u12"',
    '"\\u12g4"',
    '{} {}',
    '[1]x',
    '// c\n{}',
    '\u00a0{}',
  ])('rejects malformed text %j with WORKFLOW_JSON_INVALID', (text) => {
    expect(() => parseStrictJson(text)).toThrowCode(WorkflowError, 'WORKFLOW_JSON_INVALID');
  });

  it('reports a position but never the offending text', () => {
    try {
      parseStrictJson('{"keyHex": secretvalue}');
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toContain('secretvalue');
      expect((e as Error).message).toMatch(/character \d+/);
    }
  });
});
