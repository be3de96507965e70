/** Most distinct keys a {@link RepeatLimiter} tracks; further keys are passed through untracked. */
export const MAX_REPEAT_KEYS = 256;

/** Options of {@link RepeatLimiter}. */
export interface RepeatLimiterOptions<T> {
  /** Length of one summary window, ms (> 0). */
  readonly intervalMs: number;
  /**
   * Receives every line that is let through: `repeated` is 0 for a first occurrence (the item itself), or the
   * number of identical items swallowed since the last line for that key (a summary; `item` is the latest).
   */
  readonly emit: (item: T, repeated: number) => void;
}

interface Entry<T> {
  windowStart: number;
  suppressed: number;
  last: T;
}

/**
 * Rate-limits identical lines (ADR 0056): the first occurrence of a key is emitted at once; identical ones are
 * counted, and {@link flush} emits one summary per key and window (`repeated` N). A key with no repeat for a
 * whole window is forgotten, so its next occurrence is emitted in full again. Time is passed in, never read.
 */
export class RepeatLimiter<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #intervalMs: number;
  readonly #emit: (item: T, repeated: number) => void;

  constructor(options: RepeatLimiterOptions<T>) {
    if (!Number.isFinite(options.intervalMs) || options.intervalMs <= 0) {
      throw new RangeError(`intervalMs must be a positive number, got ${String(options.intervalMs)}`);
    }
    this.#intervalMs = options.intervalMs;
    this.#emit = options.emit;
  }

  /** Keys currently tracked (for bounds checks in tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** Emits `item` now, or counts it when an identical `key` was emitted in the current window. */
  submit(key: string, item: T, now: number): void {
    const entry = this.#entries.get(key);
    if (entry) {
      entry.suppressed++;
      entry.last = item;
      return;
    }
    if (this.#entries.size < MAX_REPEAT_KEYS)
      this.#entries.set(key, { windowStart: now, suppressed: 0, last: item });
    this.#emit(item, 0);
  }

  /** Emits the summaries of windows that ended by `now` (every window when `all`), and forgets quiet keys. */
  flush(now: number, all = false): void {
    for (const [key, e] of this.#entries) {
      if (!all && now - e.windowStart < this.#intervalMs) continue;
      if (e.suppressed === 0) {
        this.#entries.delete(key);
        continue;
      }
      const n = e.suppressed;
      e.suppressed = 0;
      e.windowStart = now;
      this.#emit(e.last, n);
    }
  }

  /** When the earliest open window ends (the next useful {@link flush}), or undefined when nothing is tracked. */
  nextFlushAt(): number | undefined {
    let next: number | undefined;
    for (const e of this.#entries.values()) {
      const at = e.windowStart + this.#intervalMs;
      if (next === undefined || at < next) next = at;
    }
    return next;
  }
}
