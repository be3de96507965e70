import { AgentError } from '../errors.js';

/** Counts in-flight step runs so shutdown can wait for them (bounded drain). */
export class RunTracker {
  #active = 0;
  #waiters: (() => void)[] = [];
  #closed = false;
  #refused = 0;

  get active(): number {
    return this.#active;
  }

  /** True once {@link RunTracker.close} ran: the runtime is stopping and triggers start no new run. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Runs refused with {@link RunTracker.refuse} (logged once, in the shutdown summary, never one line each). */
  get refused(): number {
    return this.#refused;
  }

  /** Marks the runtime as stopping; runs already tracked go on, and {@link RunTracker.idle} waits for them. */
  close(): void {
    this.#closed = true;
  }

  /** Counts one refused run and returns the error to answer it with (`AGENT_SHUTTING_DOWN`, HTTP 503). */
  refuse(): AgentError {
    this.#refused++;
    return new AgentError('AGENT_SHUTTING_DOWN', 'the agent is shutting down and starts no new runs');
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
