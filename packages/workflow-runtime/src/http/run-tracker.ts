/** Counts in-flight step runs so shutdown can wait for them (bounded drain). */
export class RunTracker {
  #active = 0;
  #waiters: (() => void)[] = [];

  get active(): number {
    return this.#active;
  }

  /** Runs `fn`, counting it until it settles. */
  async track<T>(fn: () => Promise<T>): Promise<T> {
    this.#active++;
    try {
      return await fn();
    } finally {
      this.#active--;
      if (this.#active === 0) this.#waiters.splice(0).forEach((w) => w());
    }
  }

  /** Resolves true when no run is active, or false after `ms`. */
  idle(ms: number): Promise<boolean> {
    if (this.#active === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      timer.unref();
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
