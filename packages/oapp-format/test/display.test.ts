// SPEC.md §6.4 (S178): the display form of untrusted text, against testdata/vectors/display.json.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { displayJson, displayText } from '../src/index.js';

const { cases } = JSON.parse(
  readFileSync(new URL('../testdata/vectors/display.json', import.meta.url), 'utf8'),
) as { cases: { input: string; display: string }[] };

describe('S178 displayText', () => {
  for (const c of cases) {
    it(`S178 shows ${JSON.stringify(c.input)} as ${c.display}`, () => {
      expect(displayText(c.input)).toBe(c.display);
    });
  }

  it('S178 leaves no control, bidi, zero-width or separator code point in any output', () => {
    const dangerous =
      // eslint-disable-next-line no-control-regex -- the test looks for exactly these characters
      /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/u;
    for (let cp = 0; cp <= 0x10ffff; cp += cp < 0x3000 ? 1 : 0x101) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const shown = displayText(`a${String.fromCodePoint(cp)}b`);
      expect(dangerous.test(shown), cp.toString(16)).toBe(false);
    }
    expect(displayText('\ud800')).toBe('"\\u{D800}"');
  });

  it('S178 is unambiguous: different strings never share a display form', () => {
    const inputs = ['\u202e', '\\u{202E}', '"', '\\"', '\\', '\\\\', 'a\u200bb', 'ab'];
    expect(new Set(inputs.map(displayText)).size).toBe(inputs.length);
  });
});

describe('S178 displayJson', () => {
  it('S178 shows a license as compact JSON whose strings, member names included, are in display form', () => {
    expect(displayJson({ 'tier\u202e': 'gold\u0007', seats: 5, tags: ['a\u200d', null, true] })).toBe(
      '{"tier\\u{202E}":"gold\\u{0007}","seats":5,"tags":["a\\u{200D}",null,true]}',
    );
  });
});
