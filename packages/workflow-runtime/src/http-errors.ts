import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  codedProblem,
  requestIdOf,
  writeInternalProblem,
  writeProblem as writeProblemBody,
} from '@org/http-problem';
import { UPLOAD_STATUS_BY_CODE, type UploadErrorCode } from '@org/multipart-limits';
import type { ErrorRequestHandler } from 'express';
import { isCodedError, type AgentErrorCode } from './errors.js';
import { noteProblemCode } from './observe/problem-code.js';
import type { Output } from './output.js';

/** Codes an HTTP trigger can answer with. */
export type HttpErrorCode =
  | UploadErrorCode
  | Extract<
      AgentErrorCode,
      | 'AGENT_ROUTE_NOT_FOUND'
      | 'AGENT_METHOD_NOT_ALLOWED'
      | 'AGENT_STEP_FAILED'
      | 'AGENT_RESPONSE_INVALID'
      | 'AGENT_ASSET_PATH_INVALID'
      | 'AGENT_ASSET_NOT_FOUND'
      | 'AGENT_SHUTTING_DOWN'
      | 'AGENT_BODY_TOO_LARGE'
      | 'AGENT_BODY_NOT_JSON'
      | 'AGENT_BODY_DUPLICATE_KEY'
      | 'AGENT_BODY_TOO_DEEP'
    >;

/** The one code → status table (docs/engineering.md §2; multipart-limits README for `UPLOAD_*`). */
export const STATUS_BY_CODE = {
  ...UPLOAD_STATUS_BY_CODE,
  // JSON trigger bodies go through the strict parser (S2–S4), with the agent's own codes.
  AGENT_BODY_TOO_LARGE: 413,
  AGENT_BODY_NOT_JSON: 400,
  AGENT_BODY_DUPLICATE_KEY: 400,
  AGENT_BODY_TOO_DEEP: 400,
  AGENT_ROUTE_NOT_FOUND: 404,
  AGENT_METHOD_NOT_ALLOWED: 405,
  AGENT_STEP_FAILED: 500,
  AGENT_RESPONSE_INVALID: 500,
  AGENT_ASSET_PATH_INVALID: 400,
  AGENT_ASSET_NOT_FOUND: 404,
  AGENT_SHUTTING_DOWN: 503,
} as const satisfies Record<HttpErrorCode, number>;

function isHttpCode(code: string): code is HttpErrorCode {
  return Object.hasOwn(STATUS_BY_CODE, code);
}

/** An answer with a code, a safe message and extra headers (`Allow`, `Accept-Post`). */
export interface Problem {
  readonly code: HttpErrorCode;
  readonly detail: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * Writes an RFC 9457 problem on a plain node response (used by the check-continue listener too), through the one
 * shared writer: problem headers, request id, draining of a small unread body.
 */
export function writeProblem(req: IncomingMessage, res: ServerResponse, p: Problem): void {
  noteProblemCode(res, p.code);
  const body = codedProblem(p.code, STATUS_BY_CODE[p.code], p.detail, requestIdOf(res));
  writeProblemBody(req, res, body, p.headers);
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

/** Answers a refusal: its problem when it has one, else the logged generic 500. */
export function writeError(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  output: Output,
  acceptPost?: string,
): void {
  const problem = problemOf(err, acceptPost);
  if (problem !== undefined) {
    writeProblem(req, res, problem);
    return;
  }
  noteProblemCode(res, 'INTERNAL');
  writeInternalProblem(req, res, err, output);
}

/** The one error middleware: coded errors → their problem, everything else → logged with its request id, generic 500. */
export function errorMiddleware(output: Output): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    writeError(req, res, err, output, res.locals['acceptPost'] as string | undefined);
  };
}
