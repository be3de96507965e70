import type { IncomingMessage, ServerResponse } from 'node:http';
import { internalProblem } from './body.js';
import { requestIdOf, writeProblem } from './write.js';

/** Where the 500 line goes: both apps' loggers fit (`log.error(msg, fields)`). */
export interface ProblemLog {
  error(msg: string, fields: Record<string, string | undefined>): void;
}

/**
 * Answers anything that is not a coded error: one error line with the request id, the error's name and message
 * (the loggers redact what they must), then the generic 500 whose `instance` is the same request id.
 */
export function writeInternalProblem(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  log: ProblemLog,
): void {
  const reqId = requestIdOf(res);
  const e = err instanceof Error ? err : undefined;
  log.error('unhandled request error', {
    reqId,
    error: e?.name ?? typeof err,
    cause: e?.message,
    stack: e?.stack,
  });
  writeProblem(req, res, internalProblem(reqId));
}
