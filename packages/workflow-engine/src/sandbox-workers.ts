import { availableParallelism } from 'node:os';
import { EngineError } from './errors.js';

/** Workers kept for top-level runs by default; nested `sendToStep` runs may add more (bounded by the send depth). */
export const MAX_POOLED_WORKERS = Math.max(2, Math.min(8, availableParallelism() * 2));
/** The most sandbox workers {@link setSandboxWorkers} takes. */
export const MAX_SANDBOX_WORKERS = 64;

let poolSize = MAX_POOLED_WORKERS;

/**
 * Sets how many sandbox workers the process keeps for top-level runs (default {@link MAX_POOLED_WORKERS}): each
 * costs about 17 MiB resident once started (a worker thread, its V8 heap and its QuickJS memory), and a run that
 * waits for a host call (an outbound request) holds its worker. Workers start on demand; when the bound is
 * lowered, workers released while that many sit idle end. Process-wide, like the pool.
 *
 * @throws EngineError `ENGINE_LIMIT` unless an integer from 1 to {@link MAX_SANDBOX_WORKERS}.
 */
export function setSandboxWorkers(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_SANDBOX_WORKERS)
    throw new EngineError(
      'ENGINE_LIMIT',
      `sandbox workers must be an integer from 1 to ${MAX_SANDBOX_WORKERS}, got ${String(n).slice(0, 40)}`,
    );
  poolSize = n;
}

/** The bound in force: {@link MAX_POOLED_WORKERS} unless {@link setSandboxWorkers} changed it. */
export function sandboxWorkers(): number {
  return poolSize;
}
