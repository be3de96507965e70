import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { isStrictJsonError, parseStrictJson, type ParseStrictJsonOptions } from '../src/index.js';
import { parseStrictJson as previousParse } from './reference/previous-parse.js';

// Differential test: the scanner written for speed against the previous parser (kept verbatim in
// test/reference as the oracle). For every input both must agree: the same value (same keys in the same order,
// same prototypes), or the same error code, offset and message. A strictness rule the fast parser dropped would
// show here as a value where the oracle throws.
const RUNS = process.env['SLOW'] === '1' ? 5_000 : 300;

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; message: string; offset: number };

function run(
  parse: typeof parseStrictJson,
  input: string | Uint8Array,
  options: ParseStrictJsonOptions,
): Outcome {
  try {
    return { ok: true, value: parse(input, options) };
  } catch (e) {
    if (!isStrictJsonError(e)) throw e;
    return { ok: false, code: e.code, message: e.message, offset: e.details.offset };
  }
}

/** Deep comparison that also checks key order and prototypes (toEqual alone ignores both). */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (typeof v === 'object' && v !== null)
    return {
      proto: Object.getPrototypeOf(v) === null ? 'null' : 'other',
      entries: Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    };
  if (Object.is(v, -0)) return '-0';
  return v;
}

function agree(input: string, options: Partial<ParseStrictJsonOptions> = {}): void {
  const full: ParseStrictJsonOptions = { maxBytes: 1 << 20, ...options };
  const bytes = new TextEncoder().encode(input);
  const utf8RoundTrips = new TextDecoder().decode(bytes) === input;
  for (const form of utf8RoundTrips ? [input, bytes] : [input]) {
    const a = run(parseStrictJson, form, full);
    const b = run(previousParse, form, full);
    if (a.ok && b.ok) expect(shape(a.value)).toEqual(shape(b.value));
    else expect(a).toEqual(b);
  }
}

// Pieces that exercise every rule: escapes, surrogates (escaped and raw), numbers at the edges, duplicates,
// structure, whitespace, literals, control characters and a byte order mark.
// prettier-ignore
const PIECES = [
  '{', '}', '[', ']', ',', ':', '"', '\\', ' ', '\n', '\t', '\r', '\u0001', '\u00a0', '\ufeff',
  '"a"', '"a":1', '"\\u0061"', '"__proto__"', '"constructor"', '\\u', '\\ud800', '\\udc00', '\\ud83d\\ude00',
  '\ud800', '\udc00', '😀', 'é', '\\n', '\\/', '\\x', '\\u12g4', '\\uABCD', '0', '-', '-0', '01', '1.', '.5',
  '1.5', '1e3', '1E+3', '1e-3', '1e', '1e+', '9007199254740991', '9007199254740992', '-9007199254740993',
  '123456789012345', '1234567890123456', '1e400', '0.1', '1.0', 'true', 'false', 'null', 'tru', 'nul', 'NaN',
];

describe('parseStrictJson against the previous parser (differential)', () => {
  it('agrees on the hand-picked pieces alone and in pairs', () => {
    for (const a of PIECES) {
      agree(a);
      agree(`[${a}]`);
      agree(`{"k":${a}}`);
      agree(`"${a}"`);
      for (const b of PIECES) agree(`{${a}${b}}`);
    }
  });

  test.prop([fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }), fc.boolean()], { numRuns: RUNS * 10 })(
    'agrees on sequences of pieces',
    (pieces, integersOnly) => {
      agree(pieces.join(''), { integersOnly });
    },
  );

  const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.double(),
      fc.integer(),
      fc.maxSafeInteger(),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('value'), { maxKeys: 5 }),
    ),
  })).value;

  test.prop([json, fc.nat(), fc.constantFrom(...PIECES), fc.boolean(), fc.boolean()], { numRuns: RUNS * 10 })(
    'agrees on valid documents and on documents with a piece inserted or a character replaced',
    (v, pos, piece, replace, indent) => {
      const text = JSON.stringify(v, null, indent ? 1 : undefined) ?? 'null';
      agree(text);
      const at = pos % (text.length + 1);
      agree(text.slice(0, at) + piece + text.slice(replace ? at + 1 : at));
    },
  );

  test.prop([json, fc.integer({ min: 1, max: 6 })], { numRuns: RUNS })(
    'agrees under a small depth cap',
    (v, d) => {
      agree(JSON.stringify(v) ?? 'null', { maxDepth: d });
    },
  );

  it('agrees on long strings with escapes and control characters past the hand-scanned stretch', () => {
    for (const n of [0, 1, 23, 24, 25, 100])
      for (const tail of ['"', '\\n"', '\\ud800"', '\u0001"', '\ud800"', '\\u0022"', ''])
        agree(`"${'x'.repeat(n)}${tail}`);
  });
});
