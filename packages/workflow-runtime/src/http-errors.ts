import { randomUUID } from 'node:crypto';
import { noteProblemCode } from './observe/problem-code.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UploadErrorCode } from '@org/multipart-limits';
import type { ErrorRequestHandler } from 'express';
import { isCodedError, type AgentErrorCode } from './errors.js';
import type { Output } from './output.js';

/** Codes an HTTP trigger can answer with. */
export type HttpErrorCode =
  | UploadErrorCode
  | 'FORMAT_JSON_INVALID'
  | 'FORMAT_JSON_DUPLICATE_KEY'
  | 'FORMAT_JSON_TOO_DEEP'
  | 'FORMAT_BAD_UTF8'
  | 'FORMAT_SECTION_TOO_LARGE'
  | Extract<
      AgentErrorCode,
      | 'AGENT_ROUTE_NOT_FOUND'
      | 'AGENT_METHOD_NOT_ALLOWED'
      | 'AGENT_STEP_FAILED'
      | 'AGENT_RESPONSE_INVALID'
      | 'AGENT_ASSET_PATH_INVALID'
      | 'AGENT_ASSET_NOT_FOUND'
      | 'AGENT_SHUTTING_DOWN'
    >;

/** The one code → status table (house style §3; multipart-limits README for `UPLOAD_*`). */
export const STATUS_BY_CODE = {
  UPLOAD_CONTENT_ENCODING: 415,
  UPLOAD_UNSUPPORTED_MEDIA_TYPE: 415,
  UPLOAD_NOT_MULTIPART: 415,
  UPLOAD_REQUEST_TOO_LARGE: 413,
  UPLOAD_BODY_TOO_LARGE: 413,
  UPLOAD_FILE_TOO_LARGE: 413,
  UPLOAD_FIELD_TOO_LARGE: 413,
  UPLOAD_PARTS_LIMIT: 413,
  UPLOAD_HEADERS_LIMIT: 413,
  UPLOAD_BAD_BOUNDARY: 400,
  UPLOAD_BODY_NOT_UTF8: 400,
  UPLOAD_UNKNOWN_PART: 400,
  UPLOAD_DUPLICATE_PART: 400,
  UPLOAD_STREAM_MUST_BE_FILE: 400,
  UPLOAD_BODY_MUST_BE_FIELD: 400,
  UPLOAD_PART_ORDER: 400,
  UPLOAD_MISSING_PART: 400,
  UPLOAD_MALFORMED: 400,
  UPLOAD_ABORTED: 400,
  // JSON trigger bodies go through the strict parser (S2–S4).
  FORMAT_JSON_INVALID: 400,
  FORMAT_JSON_DUPLICATE_KEY: 400,
  FORMAT_JSON_TOO_DEEP: 400,
  FORMAT_BAD_UTF8: 400,
  FORMAT_SECTION_TOO_LARGE: 413,
  AGENT_ROUTE_NOT_FOUND: 404,
  AGENT_METHOD_NOT_ALLOWED: 405,
  AGENT_STEP_FAILED: 500,
  AGENT_RESPONSE_INVALID: 500,
  AGENT_ASSET_PATH_INVALID: 400,
  AGENT_ASSET_NOT_FOUND: 404,
  AGENT_SHUTTING_DOWN: 503,
} as const satisfies Record<HttpErrorCode, number>;

/** Problem `type` URIs follow the packager's (ADR 0004): prefix + code, lower case, `_` → `-`. */
export const PROBLEM_TYPE_PREFIX = 'urn:example:oapp:problem:';

function isHttpCode(code: string): code is HttpErrorCode {
  return Object.hasOwn(STATUS_BY_CODE, code);
}

function title(code: string): string {
  const text = code.toLowerCase().split('_').slice(1).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** An answer with a code, a safe message and extra headers (`Allow`, `Accept-Post`). */
export interface Problem {
  readonly code: HttpErrorCode;
  readonly detail: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

function unreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A small unread body (declared length up to this, no `Expect`) is read and discarded before a refusal is
 * answered: closing a socket with unread bytes makes the kernel reset it, and the client then sees EPIPE or
 * ECONNRESET instead of the problem. Larger or undeclared bodies are never read: `Connection: close`.
 */
export const DRAIN_MAX_BYTES = 64 * 1024;
const DRAIN_MAX_MS = 2_000;

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

function write(res: ServerResponse, status: number, text: string, headers: object, close: boolean): void {
  if (res.headersSent || res.destroyed) return;
  // A body left unread cannot be followed by another request on this connection (multipart-limits README).
  if (close) res.setHeader('connection', 'close');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v as string);
  res.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: object, headers = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  if (!unreadBody(req)) return write(res, status, text, headers, false);
  if (!isDrainable(req)) return write(res, status, text, headers, true);
  drain(req, () => write(res, status, text, headers, !req.complete));
}

/** Writes an RFC 9457 problem on a plain node response (used by the check-continue listener too). */
export function writeProblem(req: IncomingMessage, res: ServerResponse, p: Problem): void {
  const status = STATUS_BY_CODE[p.code];
  noteProblemCode(res, p.code);
  send(
    req,
    res,
    status,
    {
      type: PROBLEM_TYPE_PREFIX + p.code.toLowerCase().replaceAll('_', '-'),
      title: title(p.code),
      status,
      detail: p.detail,
      instance: `urn:uuid:${randomUUID()}`,
      code: p.code,
    },
    p.headers,
  );
}

/** The generic 500: nothing from the error itself. */
export function writeInternal(req: IncomingMessage, res: ServerResponse): void {
  noteProblemCode(res, 'INTERNAL');
  send(req, res, 500, {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    instance: `urn:uuid:${randomUUID()}`,
    code: 'INTERNAL',
  });
}

/**
 * A coded error with an HTTP status as a problem (its `headers`, such as `Allow`, kept); anything else is
 * undefined. `acceptPost` is added to 415 answers (S10).
 */
export function problemOf(err: unknown, acceptPost?: string): Problem | undefined {
  if (!isCodedError(err) || !isHttpCode(err.code)) return undefined;
  const headers: Record<string, string> = { ...(err as { headers?: Record<string, string> }).headers };
  if (STATUS_BY_CODE[err.code] === 415 && acceptPost !== undefined) headers['accept-post'] = acceptPost;
  return { code: err.code, detail: err.message, headers };
}

/** The one error middleware: coded errors → their problem, everything else → logged, generic 500. */
export function errorMiddleware(output: Output): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const problem = problemOf(err, res.locals['acceptPost'] as string | undefined);
    if (problem !== undefined) {
      writeProblem(req, res, problem);
      return;
    }
    output.error('unhandled request error', { error: err instanceof Error ? err.name : typeof err });
    writeInternal(req, res);
  };
}
