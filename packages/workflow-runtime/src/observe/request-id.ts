import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** Longest inbound `X-Request-Id` kept; a longer one is replaced. */
export const MAX_REQUEST_ID_CHARS = 128;

/** The characters an inbound `X-Request-Id` may use (no spaces, quotes or control characters: safe in logs). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id of a request: its `X-Request-Id` when that is one value of 1 to 128 characters of
 * `[A-Za-z0-9._:-]`, else a fresh UUID.
 */
export function requestIdOf(header: string | readonly string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
}

const store = new AsyncLocalStorage<string>();

/** Runs `fn` with `id` as the current request id: outbound calls made meanwhile carry it. */
export function withRequestId<T>(id: string, fn: () => T): T {
  return store.run(id, fn);
}

/** The id of the request being handled, if any (read by outbound calls). */
export function currentRequestId(): string | undefined {
  return store.getStore();
}
