import { describe, expect, it } from 'vitest';
import { StrictJsonError, isStrictJsonError, parseStrictJson, type JsonObject } from '../src/index.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const parse = (input: string | Uint8Array, integersOnly = false) =>
  parseStrictJson(input, { maxBytes: 1 << 20, integersOnly });

describe('parseStrictJson', () => {
  it('parses every JSON type from bytes and from a string', () => {
    const text = ' {"a":[1,-2.5,3e2,true,false,null],"b":"x\\u00e9\\n\\"\\/","c":{}} ';
    const expected = { a: [1, -2.5, 300, true, false, null], b: 'xé\n"/', c: {} };
    expect(parse(text)).toEqual(expected);
    expect(parse(enc(text))).toEqual(expected);
  });

  it('keeps surrogate pairs, escaped or literal', () => {
    expect(parse('"\\ud83d\\ude00"')).toBe('😀');
    expect(parse(enc('"😀"'))).toBe('😀');
    expect(parse('"😀"')).toBe('😀');
  });

  it('S4: returns prototype-less objects and keeps __proto__ and constructor as data keys', () => {
    const v = parse('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}') as JsonObject;
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(Object.getPrototypeOf(v['__proto__'])).toBeNull();
    expect('toString' in v).toBe(false);
    expect(v['__proto__']).toEqual({ polluted: true });
    expect(v['constructor']).toEqual({ prototype: 1 });
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
  });

  it('S4: makes objects with newObject when given', () => {
    const proto = Object.freeze(Object.create(null) as object);
    const v = parseStrictJson('{"a":{"__proto__":1}}', {
      maxBytes: 100,
      newObject: () => Object.create(proto) as JsonObject,
    }) as JsonObject;
    expect(Object.getPrototypeOf(v)).toBe(proto);
    expect(Object.getPrototypeOf(v['a'])).toBe(proto);
    expect(Object.keys(v['a'] as JsonObject)).toEqual(['__proto__']);
  });

  it.each([
    ['{"a":1,"a":2}', 'top-level'],
    ['{"packageId":"a","packageId":"b"}', 'different values'],
    ['{"x":{"k":1,"k":1}}', 'nested, identical values'],
    ['{"__proto__":1,"__proto__":2}', '__proto__ twice'],
    ['{"constructor":1,"constructor":2}', 'constructor twice'],
    ['{"a":1,"\\u0061":2}', 'escaped spelling of the same name'],
  ])('S65: rejects duplicate keys (%s, %s) with JSON_DUPLICATE_KEY', (text) => {
    expect(() => parse(text)).toThrowCode(StrictJsonError, 'JSON_DUPLICATE_KEY');
  });

  it.each([
    '"\\ud800"',
    '"\\udc00"',
    '"\\ud800x"',
    '"\\udc00x"',
    '"\\ud800\\u0041"',
    '{"packageId":"\\ud800"}',
  ])('S66: rejects the escaped lone surrogate %s with JSON_LONE_SURROGATE', (text) => {
    expect(() => parse(text)).toThrowCode(StrictJsonError, 'JSON_LONE_SURROGATE');
  });

  it('S66: rejects a raw lone surrogate in a string input with JSON_LONE_SURROGATE', () => {
    expect(() => parse('"a\ud800"')).toThrowCode(StrictJsonError, 'JSON_LONE_SURROGATE');
    expect(() => parse('{"\udc00":1}')).toThrowCode(StrictJsonError, 'JSON_LONE_SURROGATE');
  });

  it.each([
    [[0x22, 0xc3, 0x28, 0x22], 'C3 28'],
    [[0x22, 0xed, 0xa0, 0x80, 0x22], 'encoded surrogate'],
    [[0x22, 0xc0, 0xaf, 0x22], 'overlong'],
    [[0x22, 0xff, 0x22], 'FF'],
  ])('S67: rejects invalid UTF-8 %j (%s) with JSON_BAD_UTF8, never U+FFFD', (bytes) => {
    expect(() => parse(new Uint8Array(bytes))).toThrowCode(StrictJsonError, 'JSON_BAD_UTF8');
  });

  it('rejects a byte order mark, in bytes and in a string', () => {
    expect(() => parse(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toThrowCode(
      StrictJsonError,
      'JSON_INVALID',
    );
    expect(() => parse('\ufeff{}')).toThrowCode(StrictJsonError, 'JSON_INVALID');
  });

  it('S3: accepts 64 levels of nesting and rejects 65 with JSON_TOO_DEEP', () => {
    expect(parse('['.repeat(64) + ']'.repeat(64))).toBeDefined();
    expect(() => parse('['.repeat(65) + ']'.repeat(65))).toThrowCode(StrictJsonError, 'JSON_TOO_DEEP');
    expect(() => parse('{"a":'.repeat(65) + '1' + '}'.repeat(65))).toThrowCode(
      StrictJsonError,
      'JSON_TOO_DEEP',
    );
  });

  it('S3: rejects 100 000 levels of nesting without a stack overflow', () => {
    expect(() => parse('['.repeat(100_000))).toThrowCode(StrictJsonError, 'JSON_TOO_DEEP');
    expect(() => parse('[{"a":'.repeat(50_000))).toThrowCode(StrictJsonError, 'JSON_TOO_DEEP');
  });

  it('S3: honours a custom depth cap', () => {
    expect(parseStrictJson('[1]', { maxBytes: 10, maxDepth: 1 })).toEqual([1]);
    expect(() => parseStrictJson('[[1]]', { maxBytes: 10, maxDepth: 1 })).toThrowCode(
      StrictJsonError,
      'JSON_TOO_DEEP',
    );
  });

  it.each(['9007199254740993', '-9007199254740993', '9007199254740992', '1e400', '-1e400', '1e16'])(
    'S68: rejects the number %s with JSON_BAD_NUMBER',
    (n) => {
      expect(() => parse(`{"size":${n}}`)).toThrowCode(StrictJsonError, 'JSON_BAD_NUMBER');
    },
  );

  it('S68: accepts the largest safe integers and ordinary fractions', () => {
    expect(parse('[9007199254740991,-9007199254740991,1.5,0.1,-0]')).toEqual([
      9007199254740991, -9007199254740991, 1.5, 0.1, -0,
    ]);
  });

  it('S68: with integersOnly accepts safe integers and rejects fractions, exponents and minus zero', () => {
    expect(parse('[9007199254740991,-9007199254740991,0]', true)).toEqual([
      9007199254740991, -9007199254740991, 0,
    ]);
    for (const n of ['9007199254740992', '9007199254740993', '1.5', '1e3', '-0', '-0.0', '1.0'])
      expect(() => parse(`[${n}]`, true), n).toThrowCode(StrictJsonError, 'JSON_BAD_NUMBER');
  });

  it('enforces the byte cap on bytes before decoding and on strings counted as UTF-8', () => {
    expect(() => parseStrictJson(enc('"abcdef"'), { maxBytes: 7 })).toThrowCode(
      StrictJsonError,
      'JSON_TOO_LARGE',
    );
    expect(parseStrictJson(enc('"abcde"'), { maxBytes: 7 })).toBe('abcde');
    expect(() => parseStrictJson('"ééé"', { maxBytes: 7 })).toThrowCode(StrictJsonError, 'JSON_TOO_LARGE');
    expect(parseStrictJson('"éé"', { maxBytes: 7 })).toBe('éé');
    // Too large wins over bad UTF-8: nothing is decoded past the cap.
    expect(() => parseStrictJson(new Uint8Array(11).fill(0xff), { maxBytes: 10 })).toThrowCode(
      StrictJsonError,
      'JSON_TOO_LARGE',
    );
  });

  it.each([
    '',
    ' ',
    '{',
    '{"a":1',
    '{"a":}',
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
    '"\u0001"',
    '"\\x"',
    '"\\',
    '"\\u12"',
    '"\\u12g4"',
    '"\\u12G4"',
    '{} {}',
    '{} x',
    '[1]x',
    '// c\n{}',
    '\u00a0{}',
  ])('rejects malformed text %j with JSON_INVALID', (text) => {
    expect(() => parse(text)).toThrowCode(StrictJsonError, 'JSON_INVALID');
  });

  it('reports a position and a reason but never the offending text', () => {
    let caught: unknown;
    try {
      parse('{"keyHex": secretvalue}');
    } catch (e) {
      caught = e;
    }
    expect(isStrictJsonError(caught)).toBe(true);
    const err = caught as StrictJsonError;
    expect(err.message).not.toContain('secretvalue');
    expect(err.message).toMatch(/character 11/);
    expect(err.details).toEqual({ offset: 11, reason: 'unexpected character, expected a JSON value' });
  });
});
