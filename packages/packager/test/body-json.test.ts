import { describe, expect, it } from 'vitest';
import {
  BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA,
  bodyValidator,
  isRequestError,
  PACKAGE_ENVELOPE_REQUEST_SCHEMA,
  PACKAGE_REQUEST_SCHEMA,
  parseBody,
  STRING_ENCRYPT_REQUEST_SCHEMA,
} from '../src/index.js';
import { nonIntegerSpellings } from '../src/internal/number-spelling.js';

// Issue 29: an integer member of a request body (`sequence`, `formatVersion`, …) spelt with a fraction or an
// exponent is refused by name, never taken as the integer the number rounds to (and then signed).

const validate = bodyValidator<{ sequence?: number; formatVersion?: 1 | 2 }>({
  type: 'object',
  additionalProperties: false,
  properties: {
    sequence: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    formatVersion: { enum: [1, 2] },
    nested: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
  },
});

function refusal(text: string) {
  try {
    validate(parseBody(text, 1 << 20));
  } catch (err) {
    if (!isRequestError(err)) throw err;
    return { code: err.code, message: err.message, errors: err.errors };
  }
  throw new Error(`accepted: ${text}`);
}

describe('nonIntegerSpellings', () => {
  it('names each number with a fraction, an exponent or minus zero by its pointer, in document order', () => {
    const text =
      '{"a": 1, "b": 1.0, "c": [0, 1e3, -2E-1, -0, 5], "d/~e": {"f": 7.0000000000000001}, "s": "1.5e3", ' +
      '"t": true, "u": null, "v": [], "w": {}, "x\\"y": 2e0, "": 0.5}';
    expect(nonIntegerSpellings(text)).toEqual(['/b', '/c/1', '/c/2', '/c/3', '/d~1~0e/f', '/x"y', '/']);
    expect(nonIntegerSpellings(' 1e3 ')).toEqual(['']);
    expect(nonIntegerSpellings('{"a":[1,2,{"b":-10}],"c":"e.E"}')).toEqual([]);
  });
});

describe('a body number spelt as no integer is, for an integer member → 422 REQUEST_FIELD_INVALID naming it', () => {
  it.each([
    ['{"sequence": 1e3}', 1000],
    ['{"sequence": 1E3}', 1000],
    ['{"sequence": 10e-1}', 1],
    ['{"sequence": 7.0000000000000001}', 7],
    ['{"sequence": 7.0}', 7],
    ['{"sequence": 9007199254740990.9}', Number.MAX_SAFE_INTEGER],
    ['{"sequence": -0}', -0],
  ])('%s (the number alone is %d) is refused as /sequence', (text, rounded) => {
    // What the schema alone would take: the number the spelling rounds to, an integer.
    expect((parseBody(text, 1 << 20) as { sequence: number }).sequence).toBe(rounded);
    const r = refusal(text);
    expect(r.code).toBe('REQUEST_FIELD_INVALID');
    expect(r.errors).toEqual([
      { pointer: '/sequence', detail: expect.stringMatching(/whole number/) as string },
    ]);
    expect(r.message).toMatch(/^body field \/sequence must be written as a whole number/);
  });

  it('formatVersion 2.0 and 1e0, and a nested integer member, are refused the same way', () => {
    expect(refusal('{"formatVersion": 2.0}').errors).toEqual([
      { pointer: '/formatVersion', detail: expect.stringMatching(/whole number/) as string },
    ]);
    expect(
      refusal('{"formatVersion": 1e0, "nested": [{"n": 3}, {"n": 4.00}]}').errors!.map((e) => e.pointer),
    ).toEqual(['/formatVersion', '/nested/1/n']);
  });

  it('a schema failure at the same field is reported once; the others are all named', () => {
    const r = refusal('{"sequence": 1.5, "formatVersion": 2.0, "other": 1}');
    expect(r.errors!.map((e) => e.pointer).sort()).toEqual(['/formatVersion', '/other', '/sequence']);
    expect(r.errors!.filter((e) => e.pointer === '/sequence')).toHaveLength(1);
  });

  it('integer spellings are accepted as before', () => {
    expect(validate(parseBody('{"sequence": 9007199254740991, "formatVersion": 2}', 1 << 20))).toEqual({
      sequence: Number.MAX_SAFE_INTEGER,
      formatVersion: 2,
    });
    expect(validate(parseBody('{"sequence": 0}', 1 << 20))).toEqual({ sequence: 0 });
  });

  it('no request body takes a number that is not an integer (so every such spelling is refused)', () => {
    const numberTypes: string[] = [];
    const walk = (v: unknown, at: string): void => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}/${i}`));
      else if (typeof v === 'object' && v !== null)
        for (const [k, x] of Object.entries(v)) {
          if (k === 'type' && (x === 'number' || (Array.isArray(x) && x.includes('number'))))
            numberTypes.push(at);
          if (
            k === 'enum' &&
            Array.isArray(x) &&
            x.some((e) => typeof e === 'number' && !Number.isInteger(e))
          )
            numberTypes.push(at);
          walk(x, `${at}/${k}`);
        }
    };
    for (const [name, schema] of Object.entries({
      PACKAGE_REQUEST_SCHEMA,
      PACKAGE_ENVELOPE_REQUEST_SCHEMA,
      BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA,
      STRING_ENCRYPT_REQUEST_SCHEMA,
    }))
      walk(schema, name);
    expect(numberTypes).toEqual([]);
  });
});
