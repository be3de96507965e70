/**
 * lmdb-js 3.x leaves promises of its own unhandled when a commit fails (a full disk, an I/O error): the commit
 * promise it made for a batch no caller holds, and the `commitError` promise of the failure. Node's default for an
 * unhandled rejection ends the process, so one full disk would take down every deployment of the agent (issue 27).
 * The store handles every promise it is given and reports the failure to the runs concerned
 * (`ENGINE_PERSISTENCE_FAILED`); this guard keeps lmdb-js's own leftovers from ending the process. It is installed
 * once, when the first store is opened, and changes nothing else: any other unhandled rejection ends the process as
 * Node's default would, unless the application has a listener of its own, which then decides (ADR 0126).
 */

/** The message lmdb-js gives the writes of a commit that failed (write.js, `rejectCommit`). */
const COMMIT_FAILED = 'Commit failed (see commitError for details)';

/** Causes lmdb-js rejects a failed commit's `commitError` with, seen since the guard was installed. */
const causes = new WeakSet<object>();

/** True for lmdb-js's own rejection of a failed commit, or its `commitError` cause. */
export function isLmdbCommitFailure(reason: unknown): boolean {
  if (!(reason instanceof Error)) return false;
  if (causes.has(reason)) return true;
  if (reason.message !== COMMIT_FAILED || !('commitError' in reason)) return false;
  const inner = (reason as { commitError?: unknown }).commitError;
  if (inner instanceof Promise)
    inner.catch((cause: unknown) => {
      if (typeof cause === 'object' && cause !== null) causes.add(cause);
    });
  return true;
}

let installed = false;

function onUnhandled(reason: unknown): void {
  if (isLmdbCommitFailure(reason)) return;
  // Another listener of the application's decides; alone, this one does what Node's default does.
  if (process.listenerCount('unhandledRejection') > 1) return;
  throw reason;
}

/** Installs the guard (once per process and module copy). */
export function guardLmdbCommitFailures(): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', onUnhandled);
}
