import { describe, expect, it } from 'vitest';
import { MAX_REPEAT_KEYS, RepeatLimiter } from '../src/index.js';

function limiter(intervalMs = 100) {
  const out: [string, number][] = [];
  const l = new RepeatLimiter<string>({ intervalMs, emit: (item, n) => out.push([item, n]) });
  return { l, out };
}

describe('RepeatLimiter', () => {
  it('emits a first occurrence, counts repeats and summarises them once per window', () => {
    const { l, out } = limiter();
    l.submit('k', 'a1', 0);
    l.submit('k', 'a2', 10);
    l.submit('k', 'a3', 20);
    l.flush(99);
    expect(out).toEqual([['a1', 0]]);
    l.flush(100);
    expect(out).toEqual([
      ['a1', 0],
      ['a3', 2],
    ]);
    expect(l.nextFlushAt()).toBe(200);
  });

  it('forgets a key quiet for a whole window, so its next occurrence is emitted in full', () => {
    const { l, out } = limiter();
    l.submit('k', 'a', 0);
    l.flush(100);
    expect(l.size).toBe(0);
    expect(l.nextFlushAt()).toBeUndefined();
    l.submit('k', 'b', 150);
    expect(out).toEqual([
      ['a', 0],
      ['b', 0],
    ]);
  });

  it('keeps keys apart and flushes every open window with all', () => {
    const { l, out } = limiter();
    l.submit('x', 'x', 0);
    l.submit('y', 'y', 0);
    l.submit('x', 'x', 1);
    l.flush(2, true);
    expect(out).toEqual([
      ['x', 0],
      ['y', 0],
      ['x', 1],
    ]);
  });

  it('tracks at most MAX_REPEAT_KEYS keys and lets further keys through untracked', () => {
    const { l, out } = limiter();
    for (let i = 0; i < MAX_REPEAT_KEYS + 10; i++) l.submit(`k${i}`, 'v', 0);
    expect(l.size).toBe(MAX_REPEAT_KEYS);
    expect(out).toHaveLength(MAX_REPEAT_KEYS + 10);
  });

  it('refuses a non-positive interval with RangeError', () => {
    expect(() => new RepeatLimiter({ intervalMs: 0, emit: () => undefined })).toThrow(RangeError);
  });
});
