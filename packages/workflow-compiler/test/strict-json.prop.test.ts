import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { WorkflowError, parseStrictJson } from '../src/index.js';
import { jsonValue, reformat } from './arbitraries.js';
import { RUNS } from './fixtures.js';

describe('parseStrictJson (properties)', () => {
  test.prop([jsonValue], { numRuns: RUNS })('parses what JSON.stringify writes, to an equal value', (v) => {
    expect(parseStrictJson(JSON.stringify(v))).toEqual(v);
  });

  test.prop([jsonValue, fc.integer()], { numRuns: RUNS })(
    'ignores whitespace and member order',
    (v, seed) => {
      expect(parseStrictJson(reformat(v, seed))).toEqual(v);
    },
  );

  test.prop([fc.uint8Array({ maxLength: 64 })], { numRuns: RUNS * 4 })(
    'never throws anything but a WorkflowError on arbitrary bytes',
    (bytes) => {
      try {
        parseStrictJson(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(WorkflowError);
      }
    },
  );

  test.prop([jsonValue, fc.nat(), fc.integer({ min: 0, max: 255 })], { numRuns: RUNS * 4 })(
    'a flipped or truncated byte gives a value or a coded error, never a crash',
    (v, pos, byte) => {
      const bytes = new TextEncoder().encode(JSON.stringify(v));
      if (bytes.length === 0) return;
      const flipped = bytes.slice();
      flipped[pos % bytes.length] = byte;
      for (const input of [flipped, bytes.subarray(0, pos % bytes.length)]) {
        try {
          parseStrictJson(input);
        } catch (e) {
          expect(e).toBeInstanceOf(WorkflowError);
        }
      }
    },
  );
});
