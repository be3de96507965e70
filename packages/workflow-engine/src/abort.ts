/**
 * `work`, or a rejection with `signal.reason` as soon as `signal` aborts, whichever comes first. The engine stops
 * waiting even for a host that ignores the signal; what `work` settles with later is dropped (ADR 0069).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  work.catch(() => undefined); // settles after nobody waits any more: not an unhandled rejection
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
