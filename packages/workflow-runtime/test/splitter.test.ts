import { describe, expect, it } from 'vitest';
import { EventSplitter } from '../src/files/watch/splitter.js';

/** All events of `text` pushed in chunks of `size`, then flushed. */
function split(pattern: string, atEnd: boolean, text: string, size: number, max = 1 << 20): string[] {
  const s = new EventSplitter(pattern, atEnd, max);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...s.push(text.slice(i, i + size)));
  const last = s.flush();
  return last === undefined ? out : [...out, last];
}

describe('EventSplitter', () => {
  const text = 'one\r\ntwo\nthree\r\n\r\nfour ab five abab six';

  it('keeps the matched text: splitAtEnd ends an event with it, otherwise it starts the next', () => {
    expect(split('\\r?\\n', true, text, text.length)).toEqual([
      'one\r\n',
      'two\n',
      'three\r\n',
      '\r\n',
      'four ab five abab six',
    ]);
    expect(split('ab', false, text, text.length)).toEqual([
      'one\r\ntwo\nthree\r\n\r\nfour ',
      'ab five ',
      'ab',
      'ab six',
    ]);
  });

  it('gives the same events however the text is cut into reads, and loses nothing', () => {
    for (const [pattern, atEnd] of [
      ['\\r?\\n', true],
      ['\\r?\\n', false],
      ['ab', true],
      ['ab', false],
      ['\\n[a-z]{3}', false],
    ] as const) {
      const whole = split(pattern, atEnd, text, text.length);
      expect(whole.join('')).toBe(text);
      for (const size of [1, 2, 3, 7])
        expect([pattern, size, split(pattern, atEnd, text, size)]).toEqual([pattern, size, whole]);
    }
  });

  it('cuts an event longer than the bound into pieces of the bound, never inside a surrogate pair', () => {
    const long = `${'x'.repeat(2047)}😀${'y'.repeat(3000)}\n`;
    const got = split('\\n', true, long, 100, 2048);
    expect(got.join('')).toBe(long);
    expect(got.map((m) => m.length)).toEqual([2047, 2048, 955]);
  });
});
