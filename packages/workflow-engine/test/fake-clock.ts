import type { SchedulerClock } from '../src/index.js';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

/** A deterministic {@link SchedulerClock}: time moves only through {@link FakeClock.advance}. */
export interface FakeClock extends SchedulerClock {
  /** Timers waiting to fire. */
  readonly pending: number;
  /** Every `setTimeout` wait asked for, in order. */
  readonly waits: number[];
  /** Moves time forward by `ms`, firing due timers in order and letting promise reactions run after each. */
  advance(ms: number): Promise<void>;
  /** Moves time forward without firing anything (a stalled event loop). */
  jump(ms: number): void;
  /** Sets what `random()` returns next (default 0). */
  setRandom(v: number): void;
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

export function fakeClock(start = 1000): FakeClock {
  let now = start;
  let nextId = 1;
  let random = 0;
  const timers = new Map<number, Pending>();
  const waits: number[] = [];
  const clock: FakeClock = {
    now: () => now,
    setTimeout(fn, ms) {
      waits.push(ms);
      const id = nextId++;
      timers.set(id, { id, at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(h) {
      timers.delete(h as number);
    },
    random: () => random,
    jump(ms) {
      now += ms;
    },
    setRandom(v) {
      random = v;
    },
    get pending() {
      return timers.size;
    },
    waits,
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (;;) {
        const due = [...timers.values()]
          .filter((t) => t.at <= end)
          .sort((a, b) => a.at - b.at || a.id - b.id);
        const next = due[0];
        if (!next) break;
        timers.delete(next.id);
        now = Math.max(now, next.at);
        next.fn();
        await settle();
      }
      now = end;
      await settle();
    },
  };
  return clock;
}
