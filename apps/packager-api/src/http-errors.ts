import {
  isCodedError,
  problemBody,
  RequestError,
  STATUS_BY_CODE,
  type CodedError,
  type PackagerErrorCode,
} from '@org/packager';
import { requestIdOf, writeInternalProblem, writeProblem } from '@org/http-problem';
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from './logger.js';

// The one code → status table, the coded-error guard and the problem body live in @org/packager (ADR 0138), so
// both front-ends answer a request with the same bytes; the Express service writes them here.
export { isCodedError, problemBody, STATUS_BY_CODE };
export type { CodedError };

/** Every code a response can carry (@org/packager's `PackagerErrorCode`). */
export type AppErrorCode = PackagerErrorCode;

/** Sends an RFC 9457 problem for a coded error (the shared writer: headers, draining, request id). */
export function sendProblem(req: Request, res: Response, err: CodedError): void {
  writeProblem(req, res, problemBody(err, requestIdOf(res)), err.headers);
}

/**
 * Express's own 4xx errors carry `status` (and usually `expose`); the router's undecodable path parameter is a
 * URIError with status 400 and no `expose`. Both become REQUEST_MALFORMED, without their message.
 */
function isClientHttpError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { status } = err as { status?: unknown };
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** The one error middleware: coded errors → their problem; everything else → logged with its request id, generic 500. */
export function errorMiddleware(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (isCodedError(err)) {
      sendProblem(req, res, err);
      return;
    }
    if (isClientHttpError(err)) {
      sendProblem(req, res, new RequestError('REQUEST_MALFORMED', 'the request could not be read'));
      return;
    }
    writeInternalProblem(req, res, err, log);
  };
}
