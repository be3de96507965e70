import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdOfInstance, type ProblemBody } from './body.js';

/**
 * A small unread body (declared length up to this, no `Expect`) is read and discarded before a refusal is
 * answered: closing a socket with unread bytes makes the kernel reset it, and the client then sees EPIPE or
 * ECONNRESET instead of the problem. Larger or undeclared bodies are never read: `Connection: close`.
 */
export const DRAIN_MAX_BYTES = 64 * 1024;
/** Longest wait for a small body to arrive before answering anyway (and closing). */
export const DRAIN_MAX_MS = 2_000;

/** Headers every problem carries: never sniffed into something a browser renders, never cached. */
export const PROBLEM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/problem+json',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
});

/**
 * The request id of a response: the one a request-log middleware put on `res.locals.requestId`, else a new one,
 * stored there so the problem's `instance`, the `X-Request-Id` header and a log line all carry the same id.
 */
export function requestIdOf(res: ServerResponse): string {
  const holder = res as ServerResponse & { locals?: Record<string, unknown> };
  const id = holder.locals?.['requestId'];
  if (typeof id === 'string') return id;
  const fresh = randomUUID();
  if (holder.locals !== undefined) holder.locals['requestId'] = fresh;
  return fresh;
}

function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function isDrainable(req: IncomingMessage): boolean {
  const length = Number(req.headers['content-length']);
  return (
    req.headers['transfer-encoding'] === undefined &&
    req.headers['expect'] === undefined &&
    Number.isSafeInteger(length) &&
    length <= DRAIN_MAX_BYTES &&
    !req.destroyed
  );
}

/** Discards the rest of a small request body, then calls `done` (at most once; bounded in time). */
function drain(req: IncomingMessage, done: () => void): void {
  let called = false;
  const finish = () => {
    if (called) return;
    called = true;
    clearTimeout(timer);
    done();
  };
  const timer = setTimeout(finish, DRAIN_MAX_MS);
  timer.unref();
  req.once('end', finish).once('close', finish).once('error', finish);
  req.resume();
}

function write(
  res: ServerResponse,
  text: string,
  status: number,
  headers: Readonly<Record<string, string>>,
  close: boolean,
): void {
  if (res.headersSent || res.destroyed) return;
  // A body left unread cannot be followed by another request on this connection (multipart-limits README).
  if (close) res.setHeader('connection', 'close');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  for (const [k, v] of Object.entries(PROBLEM_HEADERS)) res.setHeader(k, v);
  res.setHeader('content-length', Buffer.byteLength(text));
  res.statusCode = status;
  res.end(text);
}

/** `res.locals` key where {@link writeProblem} leaves the `code` of the problem it answered with. */
export const PROBLEM_CODE_LOCAL = 'problemCode';

/**
 * Writes an RFC 9457 problem on a node response (an Express response is one): the problem headers,
 * `X-Request-Id` from the body's `instance` unless one is set, `headers` (such as `Allow`), then the body. A small
 * unread request body is drained first so the connection survives; a large or undeclared one gets
 * `Connection: close`. A response whose headers already went out is destroyed instead (nothing else is safe).
 */
export function writeProblem(
  req: IncomingMessage,
  res: ServerResponse,
  body: ProblemBody,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const id = requestIdOfInstance(body.instance);
  if (!res.hasHeader('x-request-id') && id !== undefined) res.setHeader('x-request-id', id);
  // The access log and the metrics read the code of an error answer from here.
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  if (locals !== undefined) locals[PROBLEM_CODE_LOCAL] = body.code;
  const text = JSON.stringify(body);
  if (!hasUnreadBody(req)) return write(res, text, body.status, headers, false);
  if (!isDrainable(req)) return write(res, text, body.status, headers, true);
  drain(req, () => write(res, text, body.status, headers, !req.complete));
}
