import { availableParallelism } from 'node:os';
import { EngineError } from './errors.js';

/**
 * Workers kept for top-level runs by default, one per core from 2 to 8 (ADR 0119; twice the cores before); nested
 * `sendToStep` runs may add more (bounded by the send depth).
 */
export const MAX_POOLED_WORKERS = Math.max(2, Math.min(8, availableParallelism()));
/** The most sandbox workers {@link setSandboxWorkers} takes. */
export const MAX_SANDBOX_WORKERS = 64;

let poolSize = MAX_POOLED_WORKERS;
let started = 0;

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

/** How long an idle sandbox worker is kept by default before it ends, in ms (ADR 0118). */
export const DEFAULT_SANDBOX_IDLE_MS = 300_000;
/** The longest idle time {@link setSandboxIdleMs} takes (a day). */
export const MAX_SANDBOX_IDLE_MS = 86_400_000;

let idleMs = DEFAULT_SANDBOX_IDLE_MS;
/** The pool's check of its idle workers against a new idle time (set by the pool). */
let idleMsChanged: (() => void) | undefined;

/**
 * Sets how long a sandbox worker may sit idle in the pool before it ends (default {@link DEFAULT_SANDBOX_IDLE_MS});
 * `0` keeps idle workers for the life of the process. An ended worker gives back its thread, V8 heap and QuickJS
 * memory; the next run that needs one more worker starts it again (and sets up its sandbox, ≈ 0.1–0.3 s).
 * Applies to the workers idle now too, counted from when each became idle (so a worker started early by
 * `prewarmSandbox` ends by the time set here). Process-wide, like the pool.
 *
 * @throws EngineError `ENGINE_LIMIT` unless an integer from 0 to {@link MAX_SANDBOX_IDLE_MS}.
 */
export function setSandboxIdleMs(ms: number): void {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_SANDBOX_IDLE_MS)
    throw new EngineError(
      'ENGINE_LIMIT',
      `sandbox idle time must be an integer from 0 to ${MAX_SANDBOX_IDLE_MS} ms, got ${String(ms).slice(0, 40)}`,
    );
  idleMs = ms;
  idleMsChanged?.();
}

/** Registers the pool's check run when the idle time changes (not exported from the package). */
export function onIdleMsChange(check: () => void): void {
  idleMsChanged = check;
}

/** The idle time in force, in ms; 0: idle workers are kept. */
export function sandboxIdleMs(): number {
  return idleMs;
}

/** Sandbox workers started and not yet ended in this process, busy or idle (for tests and diagnostics). */
export function sandboxWorkersStarted(): number {
  return started;
}

/** The pool's count of started workers (not exported from the package). */
export function countStarted(delta: 1 | -1): void {
  started += delta;
}
