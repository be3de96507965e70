import type { Server } from 'node:http';

/** The time limits {@link applyServerTimeouts} puts on a node:http server, in milliseconds (0: off). */
export interface ServerTimeouts {
  /** Longest wait for a request's complete headers (`server.headersTimeout`). */
  readonly headersMs: number;
  /** Longest wait for a whole request, headers and body (`server.requestTimeout`). */
  readonly requestMs: number;
  /** How long an idle keep-alive connection stays open (`server.keepAliveTimeout`); unset: Node's 5 s. */
  readonly keepAliveMs?: number | undefined;
}

/** The longest gap between two checks of the header and request timeouts. */
export const MAX_CONNECTIONS_CHECK_MS = 1000;
const MIN_CONNECTIONS_CHECK_MS = 10;

/**
 * How often Node should look for connections past their header or request timeout: a quarter of the smallest
 * timeout that is on, at most {@link MAX_CONNECTIONS_CHECK_MS}, at least 10 ms. Node's default is 30 s, so a 3 s
 * header timeout cut a slow client at 3 to 33 s; with this a timeout fires at most one interval late, never more
 * than 1 s and never more than a quarter of its own length.
 * @throws RangeError when a timeout is negative or not a number.
 */
export function connectionsCheckingIntervalOf(t: ServerTimeouts): number {
  for (const [name, ms] of Object.entries({ headersMs: t.headersMs, requestMs: t.requestMs })) {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`${name} must be a finite number >= 0, got ${String(ms)}`);
  }
  const on = [t.headersMs, t.requestMs].filter((ms) => ms > 0);
  const smallest = Math.min(MAX_CONNECTIONS_CHECK_MS * 4, ...on);
  return Math.max(MIN_CONNECTIONS_CHECK_MS, Math.min(MAX_CONNECTIONS_CHECK_MS, Math.floor(smallest / 4)));
}

/**
 * Puts the header, request and keep-alive timeouts on a node:http server, with a connections-checking interval
 * derived from them ({@link connectionsCheckingIntervalOf}), so a slow client is cut within 1 s of the configured
 * limit (408, then the socket closes). Node reads the interval when the server starts listening: call this before
 * `listen()`.
 * @throws RangeError when a timeout is negative or not a number, or `headersMs` exceeds a `requestMs` that is on.
 * @throws Error when the server is already listening (the interval would not apply).
 */
export function applyServerTimeouts(server: Server, t: ServerTimeouts): void {
  const interval = connectionsCheckingIntervalOf(t);
  // Node refuses the same in createServer(): the request timeout covers the headers.
  if (t.requestMs > 0 && t.headersMs > t.requestMs)
    throw new RangeError(`headersMs (${t.headersMs}) must be <= requestMs (${t.requestMs})`);
  if (server.listening)
    throw new Error('applyServerTimeouts must be called before listen(): the server is already listening');
  server.headersTimeout = t.headersMs;
  server.requestTimeout = t.requestMs;
  if (t.keepAliveMs !== undefined) server.keepAliveTimeout = t.keepAliveMs;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = interval;
}
