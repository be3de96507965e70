import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { createFramer, FrameTooLargeError, type Framing } from '../src/tcp/framing.js';

const numRuns = process.env['SLOW'] ? 5_000 : 200;
const enc = (s: string) => Buffer.from(s, 'utf8');
const texts = (frames: Buffer[]) => frames.map((f) => f.toString('latin1'));

/** Feeds `bytes` cut at `cuts` (offsets) and returns every message, the end-of-stream rest included. */
function frame(framing: Framing, bytes: Buffer, cuts: number[], max = 1 << 20): Buffer[] {
  const framer = createFramer(framing, max);
  const out: Buffer[] = [];
  let at = 0;
  for (const c of [...cuts.filter((x) => x > 0 && x < bytes.length)].sort((a, b) => a - b)) {
    out.push(...framer.push(bytes.subarray(at, c)));
    at = c;
  }
  out.push(...framer.push(bytes.subarray(at)));
  const rest = framer.flush();
  if (rest !== undefined) out.push(rest);
  return out;
}

const delim = (d: string, strip = false): Framing => ({ kind: 'delimiter', delimiter: enc(d), strip });

describe('createFramer', () => {
  it('cuts at a delimiter split across chunks, byte by byte, keeping or stripping it', () => {
    const bytes = enc('ab\r\ncd\r\n\r\nef');
    const byteCuts = [...bytes.keys()];
    expect(texts(frame(delim('\r\n'), bytes, byteCuts))).toEqual(['ab\r\n', 'cd\r\n', '\r\n', 'ef']);
    expect(texts(frame(delim('\r\n', true), bytes, byteCuts))).toEqual(['ab', 'cd', '', 'ef']);
  });

  it('cuts fixed-length messages and drops a partial one at the end', () => {
    expect(texts(frame({ kind: 'fixed', length: 3 }, enc('abcdefgh'), [1, 4, 5]))).toEqual(['abc', 'def']);
  });

  it('throws FrameTooLargeError as soon as no delimiter can end a message within the limit', () => {
    const framer = createFramer(delim('--'), 8);
    expect(framer.push(enc('12345678-'))).toEqual([]);
    expect(() => framer.push(enc('x'))).toThrow(FrameTooLargeError);
    const exact = createFramer(delim('--', true), 8);
    expect(texts(exact.push(enc('12345678--')))).toEqual(['12345678']);
    expect(() => createFramer(delim('\n'), 4).push(enc('12345\n'))).toThrow(FrameTooLargeError);
  });

  it('holds at most one partial message', () => {
    const framer = createFramer(delim('\n'), 100);
    framer.push(enc('a\nbb\nccc'));
    expect(framer.pendingBytes).toBe(3);
  });
});

describe('createFramer (properties)', () => {
  const lines = fc.array(fc.stringMatching(/^[a-z;|]{0,12}$/), { maxLength: 20 });
  test.prop([lines, fc.constantFrom(';', '||', ';|;'), fc.array(fc.nat(300))], { numRuns })(
    'cutting the stream anywhere gives the same messages as cutting it whole',
    (parts, d, cuts) => {
      const bytes = enc(parts.join(d) + d);
      expect(texts(frame(delim(d, true), bytes, cuts))).toEqual(texts(frame(delim(d, true), bytes, [])));
      expect(frame(delim(d), bytes, cuts).reduce((n, f) => n + f.length, 0)).toBe(bytes.length);
    },
  );

  test.prop([fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 1, max: 16 }), fc.array(fc.nat(200))], {
    numRuns,
  })('fixed length: every message has the length, in order, whatever the chunks', (data, length, cuts) => {
    const bytes = Buffer.from(data);
    const out = frame({ kind: 'fixed', length }, bytes, cuts);
    expect(out.every((f) => f.length === length)).toBe(true);
    expect(Buffer.concat(out)).toEqual(bytes.subarray(0, out.length * length));
    expect(out.length).toBe(Math.floor(bytes.length / length));
  });
});
