import type { IncomingMessage, ServerResponse } from 'node:http';

// The request and response a table route works with (ADR 0120): node:http's own objects, as the server made
// them, with what the route front adds (`res.locals`, the circular `req.res`/`res.req`). Express's request and
// response prototypes are not put under them: an object whose prototype chain gains a level costs node's HTTP
// and stream code misses on every property it looks up, ~38 µs of CPU per request in the bench (README).

/** A table route's request: node's, with its response attached. */
export type TableRequest = IncomingMessage & { res?: ServerResponse | undefined };
/** A table route's response: node's, with `locals` (request id, route template, problem code). */
export type TableResponse = ServerResponse & { locals: Record<string, unknown>; req?: IncomingMessage };
/** A table route's handler: a throw or a rejected promise goes to the error middleware, as in Express. */
export type TableHandler = (
  req: TableRequest,
  res: TableResponse,
  next: (err?: unknown) => void,
) => void | Promise<void>;

/** Answers `status` with `body` of media type `type` and its exact `Content-Length` (no body for `HEAD`). */
export function sendBody(res: ServerResponse, type: string, body: string | Uint8Array, status = 200): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  // node:http itself drops the body of an answer to HEAD, and keeps the headers.
  res.end(body);
}

/** `res.json(value)` as Express 5 answers it with this app's settings (no replacer, no spaces, no ETag). */
export function sendJson(res: ServerResponse, value: unknown, status = 200): void {
  sendBody(res, 'application/json; charset=utf-8', JSON.stringify(value), status);
}

/**
 * The path of a request URL exactly as Express's `req.path` reads it (parseurl's fast path: an origin-form URL
 * without whitespace, `#`, NBSP or BOM, cut at the first `?`), or undefined for any other URL, which the caller
 * leaves to Express.
 */
export function simplePath(url: string | undefined): string | undefined {
  if (url === undefined || url.charCodeAt(0) !== 0x2f) return undefined;
  let end = url.length;
  for (let i = 1; i < url.length; i++) {
    switch (url.charCodeAt(i)) {
      case 0x3f: // ?
        if (end === url.length) end = i;
        break;
      case 0x09:
      case 0x0a:
      case 0x0c:
      case 0x0d:
      case 0x20:
      case 0x23:
      case 0xa0:
      case 0xfeff:
        return undefined;
    }
  }
  return end === url.length ? url : url.slice(0, end);
}
