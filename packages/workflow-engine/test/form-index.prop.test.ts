import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { FormIndex } from '../src/form-index.js';

const numRuns = process.env['SLOW'] ? 20_000 : 300;

/** The longest form starting at each position, by brute force: what the index must find. */
function reference(forms: Set<string>, text: string): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < text.length; i++) {
    let best = 0;
    for (const f of forms) if (f.length >= 4 && f.length > best && text.startsWith(f, i)) best = f.length;
    if (best > 0) out.push([i, i + best]);
  }
  return out;
}

/** Few letters, so forms share prefixes and overlap; plus a surrogate half and a non-ASCII letter. */
const letter = fc.constantFrom('a', 'b', 'c', '=', '%', '\\', '\u00e9', '\ud83d');
const word = (min: number, max: number) =>
  fc.array(letter, { minLength: min, maxLength: max }).map((a) => a.join(''));

/** Forms that often share a prefix (`Bearer …` header values), so nodes outgrow their lists. */
const form = fc
  .tuple(fc.constantFrom('', '', 'Bear', 'Bearer ', 'aaaaaaaa'), word(1, 14))
  .map(([prefix, rest]) => prefix + rest);

describe('FormIndex', () => {
  test.prop(
    [fc.array(form, { minLength: 12, maxLength: 48 }), fc.array(form, { maxLength: 20 }), word(0, 60)],
    {
      numRuns,
    },
  )(
    'finds the longest form at every position, also after forms are removed',
    (forms, removed, filler) => {
      const index = new FormIndex();
      const kept = new Set<string>();
      for (const f of forms) {
        index.add(f);
        kept.add(f);
      }
      for (const f of removed) {
        index.delete(f);
        kept.delete(f);
      }
      // A text made of the forms themselves and filler, so that matches are common.
      const text = [...forms, filler].join(filler.slice(0, 3));
      const found: [number, number][] = [];
      index.occurrences(text, found);
      expect(found).toEqual(reference(kept, text));
    },
    120_000,
  );
});
