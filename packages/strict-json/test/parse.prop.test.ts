import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { isStrictJsonError, parseStrictJson } from '../src/index.js';

const RUNS = process.env['SLOW'] === '1' ? 2_000 : 100;
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 8 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;
const parse = (input: string | Uint8Array) => parseStrictJson(input, { maxBytes: 1 << 20 });

describe('parseStrictJson (properties)', () => {
  test.prop([json], { numRuns: RUNS })('parses what JSON.stringify writes, to an equal value', (v) => {
    expect(parse(JSON.stringify(v))).toEqual(v);
    expect(parse(new TextEncoder().encode(JSON.stringify(v, null, 2)))).toEqual(v);
  });

  test.prop([json, fc.nat(), fc.integer({ min: 0, max: 255 })], { numRuns: RUNS * 4 })(
    'a flipped or truncated byte gives a value or a StrictJsonError, never anything else',
    (v, pos, byte) => {
      const bytes = new TextEncoder().encode(JSON.stringify(v));
      const flipped = bytes.slice();
      flipped[pos % bytes.length] = byte;
      for (const input of [flipped, bytes.subarray(0, pos % bytes.length)]) {
        try {
          parse(input);
        } catch (e) {
          expect(isStrictJsonError(e)).toBe(true);
        }
      }
    },
  );
});
