import { describe, expect, it } from 'vitest';
import { OappError, parseStrictJson } from '../src/index.js';

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
  it('S65: rejects a duplicate key with FORMAT_JSON_DUPLICATE_KEY, also when written with escapes', () => {
    expect(() => parse('{"packageId":"a","packageId":"b"}')).toThrowCode(
      OappError,
      'FORMAT_JSON_DUPLICATE_KEY',
    );
    expect(() => parse('{"a":1,"\\u0061":2}')).toThrowCode(OappError, 'FORMAT_JSON_DUPLICATE_KEY');
  });
  it('S66: rejects lone surrogates with FORMAT_JSON_INVALID', () => {
    for (const s of ['"\\ud800"', '"\\udc00"', '"\\ud800x"', '"\\ud800\\u0041"'])
      expect(() => parse(s), s).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
  });
  it('S67: rejects invalid UTF-8 (C3 28) with FORMAT_BAD_UTF8, never U+FFFD', () => {
    expect(() => parse(Uint8Array.of(0x22, 0xc3, 0x28, 0x22))).toThrowCode(OappError, 'FORMAT_BAD_UTF8');
    expect(() => parse(Uint8Array.of(0x22, 0xed, 0xa0, 0x80, 0x22))).toThrowCode(
      OappError,
      'FORMAT_BAD_UTF8',
    );
  });
  it('rejects a byte order mark', () => {
    expect(() => parse(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).toThrowCode(
      OappError,
      'FORMAT_JSON_INVALID',
    );
  });
  it('S3: rejects nesting over 64 levels with FORMAT_JSON_TOO_DEEP, also 100 000 levels without a stack overflow', () => {
    expect(parse('['.repeat(64) + ']'.repeat(64))).toBeDefined();
    expect(() => parse('['.repeat(65) + ']'.repeat(65))).toThrowCode(OappError, 'FORMAT_JSON_TOO_DEEP');
    expect(() => parse('[{"a":'.repeat(50_000))).toThrowCode(OappError, 'FORMAT_JSON_TOO_DEEP');
  });
  it('S68: with integersOnly rejects fractions, exponents and integers beyond 2^53 - 1', () => {
    expect(parse('[9007199254740991,-9007199254740991,0]', true)).toEqual([
      9007199254740991, -9007199254740991, 0,
    ]);
    for (const n of ['9007199254740992', '9007199254740993', '1.5', '1e3', '-0.0'])
      expect(() => parse(`[${n}]`, true), n).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
  });
  it('S4: keeps "__proto__" as a plain key of a prototype-less object', () => {
    const v = parse('{"__proto__":{"polluted":true},"constructor":1}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(null);
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
  it('rejects malformed text with FORMAT_JSON_INVALID', () => {
    for (const s of [
      '',
      '{',
      '{"a":}',
      '{"a" 1}',
      '[1,]',
      '{"a":1,}',
      '01',
      '-',
      '1.',
      '"\u0001"',
      'tru',
      '"\\x"',
      '{} x',
      "{'a':1}",
      'NaN',
    ]) {
      expect(() => parse(s), JSON.stringify(s)).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
    }
  });
  it('checks the byte cap before decoding', () => {
    expect(() => parseStrictJson(new Uint8Array(11), { what: 'X', maxBytes: 10 })).toThrowCode(
      OappError,
      'FORMAT_SECTION_TOO_LARGE',
    );
  });
});
