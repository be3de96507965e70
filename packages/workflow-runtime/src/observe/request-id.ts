import { AsyncLocalStorage } from 'node:async_hooks';
import {
  MAX_REQUEST_ID_CHARS as MAX_CHARS,
  REQUEST_ID_PATTERN as PATTERN,
  requestIdFrom,
} from '@org/http-problem';

// The rule lives with the problem writer, shared with the packager, and is re-exported under the runtime's names.
// Typed here so the published declarations never name the private, bundled package.
/** Longest inbound `X-Request-Id` kept; a longer one is replaced. */
export const MAX_REQUEST_ID_CHARS: number = MAX_CHARS;
/** The characters an inbound `X-Request-Id` may use (no spaces, quotes or control characters: safe in logs). */
export const REQUEST_ID_PATTERN: RegExp = PATTERN;
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
