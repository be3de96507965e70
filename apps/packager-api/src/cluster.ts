import cluster, { type Worker } from 'node:cluster';
import type { Logger } from './logger.js';

/** Extra time the primary grants its workers beyond their own drain timeout before it kills them. */
const KILL_GRACE_MS = 5_000;

/**
 * The primary process of `PACKAGER_WORKERS` > 1 (ADR 0100): forks `workers` copies of this program, which share
 * one listening port through node:cluster (round-robin on Linux), and serves nothing itself. SIGTERM or SIGINT is
 * passed on to every worker, which drains as a single process does; the primary exits 0 once all of them exited
 * 0, else 1. A worker that exits on its own (a crash, or a start-up failure such as a taken port) stops the
 * whole group with exit code 1: whatever supervises the service restarts it, as it would a single process.
 */
export function runPrimary(workers: number, shutdownMs: number, log: Logger): void {
  let stopping = false;
  let failed = false;
  const alive = new Set<Worker>();

  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('stopping workers', { reason, workers: alive.size });
    for (const w of alive) w.process.kill('SIGTERM');
    setTimeout(() => {
      for (const w of alive) {
        log.warn('worker did not stop in time; killing it', { worker: w.id, ms: shutdownMs + KILL_GRACE_MS });
        w.process.kill('SIGKILL');
      }
    }, shutdownMs + KILL_GRACE_MS).unref();
  };

  cluster.on('exit', (worker, code, signal) => {
    alive.delete(worker);
    const clean = code === 0 && signal === null;
    if (!clean) failed = true;
    if (!stopping) {
      log.error('worker exited unexpectedly; stopping the others', {
        worker: worker.id,
        code: code ?? undefined,
        signal: signal ?? undefined,
      });
      stop('worker exit');
    }
    if (alive.size === 0) {
      log.info('stopped', { workers });
      process.exit(failed ? 1 : 0);
    }
  });
  for (let i = 0; i < workers; i++) alive.add(cluster.fork());
  log.info('cluster started', { workers });
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** True in the process that should supervise workers instead of serving (`workers` > 1, not yet a worker). */
export function isClusterPrimary(workers: number): boolean {
  return workers > 1 && cluster.isPrimary;
}

/** This process's worker id under node:cluster, or undefined when it is not a worker. */
export function workerId(): number | undefined {
  return cluster.worker?.id;
}
