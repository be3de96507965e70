import { randomUUID } from 'node:crypto';

/** Longest inbound `X-Request-Id` kept; a longer one is replaced. */
export const MAX_REQUEST_ID_CHARS = 128;

/** The characters an inbound `X-Request-Id` may use (no spaces, quotes or control characters: safe in logs). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id of a request, from its `X-Request-Id` header: the header when it is one value of 1 to 128
 * characters of `[A-Za-z0-9._:-]`, else a fresh UUID. The one rule of both services.
 */
export function requestIdFrom(header: string | readonly string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
}
