import { AsyncLocalStorage } from 'node:async_hooks';
import { requestIdFrom } from '@org/http-problem';

// The rule lives with the problem writer, shared with the packager; re-exported under the runtime's names.
export { MAX_REQUEST_ID_CHARS, REQUEST_ID_PATTERN } from '@org/http-problem';
/** The request id of a request: its valid `X-Request-Id` (1 to 128 of `[A-Za-z0-9._:-]`), else a fresh UUID. */
export const requestIdOf: (header: string | readonly string[] | undefined) => string = requestIdFrom;

const store = new AsyncLocalStorage<string>();

/** Runs `fn` with `id` as the current request id: outbound calls made meanwhile carry it. */
export function withRequestId<T>(id: string, fn: () => T): T {
  return store.run(id, fn);
}

/** The id of the request being handled, if any (read by outbound calls). */
export function currentRequestId(): string | undefined {
  return store.getStore();
}
