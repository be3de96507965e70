import type { IncomingMessage, ServerResponse } from 'node:http';
import { internalProblem } from './body.js';
import { requestIdOf, writeProblem } from './write.js';

/** Where the 500 line goes: both apps' loggers fit (`log.error(msg, fields)`). */
export interface ProblemLog {
  error(msg: string, fields: Record<string, string | undefined>): void;
}

/**
 * The call sites of `e.stack` without its header (`Name: message`): where it was thrown, never what it said.
 * A message may quote request bytes (keys, plaintext, restricted data); frames hold only code locations.
 */
function framesOf(e: Error): string | undefined {
  const stack = e.stack;
  if (typeof stack !== 'string') return undefined;
  const head = String(e);
  const rest = stack.startsWith(head) ? stack.slice(head.length) : stack.slice(stack.indexOf('\n    at '));
  const at = rest.indexOf('\n    at ');
  return at < 0 ? undefined : rest.slice(at + 1);
}

/**
 * Answers anything that is not a coded error: one error line with the request id, the error's name and its stack
 * frames (never its message, which may quote request data), then the generic 500 whose `instance` is the same
 * request id.
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
    stack: e === undefined ? undefined : framesOf(e),
  });
  writeProblem(req, res, internalProblem(reqId));
}
