import { describe, expect, it } from 'vitest';
import { OappError, parseStrictJson } from '../src/index.js';

// The parser's own table (duplicate keys, surrogates, UTF-8, depth, size, numbers, __proto__) lives in
// packages/strict-json/test; this file checks that each of its failures becomes the format's code.
const te = new TextEncoder();
const parse = (text: string | Uint8Array, integersOnly = false) =>
  parseStrictJson(typeof text === 'string' ? te.encode(text) : text, {
    what: 'TEST',
    maxBytes: 1 << 20,
    integersOnly,
  });

describe('parseStrictJson', () => {
  it('parses ordinary JSON with escapes and surrogate pairs', () => {
    expect(parse('{"a":[1,-2,3.5e2,true,false,null],"b":"x\\n\\u00e9\\ud83d\\ude00\\/"}')).toEqual({
      a: [1, -2, 350, true, false, null],
      b: 'x\né😀/',
    });
  });
  it('S65: rejects a duplicate key with FORMAT_JSON_DUPLICATE_KEY', () => {
    expect(() => parse('{"a":1,"\\u0061":2}')).toThrowCode(OappError, 'FORMAT_JSON_DUPLICATE_KEY');
  });
  it('S66: rejects a lone surrogate with FORMAT_JSON_INVALID', () => {
    expect(() => parse('"\\ud800x"')).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
  });
  it('S67: rejects invalid UTF-8 with FORMAT_BAD_UTF8', () => {
    expect(() => parse(Uint8Array.of(0x22, 0xc3, 0x28, 0x22))).toThrowCode(OappError, 'FORMAT_BAD_UTF8');
  });
  it('S3: rejects nesting over 64 levels with FORMAT_JSON_TOO_DEEP', () => {
    expect(() => parse('['.repeat(65) + ']'.repeat(65))).toThrowCode(OappError, 'FORMAT_JSON_TOO_DEEP');
  });
  it('S68: rejects a bad number with FORMAT_JSON_INVALID (integersOnly, and beyond 2^53 - 1 always)', () => {
    expect(() => parse('[1.5]', true)).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
    expect(() => parse('[9007199254740993]')).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
  });
  it('S4: keeps "__proto__" as a plain key of a prototype-less object', () => {
    const v = parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(null);
    expect(Object.keys(v)).toEqual(['__proto__']);
  });
  it('rejects malformed text with FORMAT_JSON_INVALID, naming what was parsed and where', () => {
    expect(() => parse('{"a":}')).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
    expect(() => parse('{"a":}')).toThrow(/^TEST: .*at character 5/);
  });
  it('checks the byte cap before decoding with FORMAT_SECTION_TOO_LARGE', () => {
    expect(() => parseStrictJson(new Uint8Array(11).fill(0xff), { what: 'X', maxBytes: 10 })).toThrowCode(
      OappError,
      'FORMAT_SECTION_TOO_LARGE',
    );
  });
});
