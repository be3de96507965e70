import type { ServerResponse } from 'node:http';

const codes = new WeakMap<ServerResponse, string>();

/** Records the problem `code` a response answers with (read by the access log and metrics). */
export function noteProblemCode(res: ServerResponse, code: string): void {
  codes.set(res, code);
}

/** The problem `code` of an error response, if one was written. */
export function problemCodeOf(res: ServerResponse): string | undefined {
  return codes.get(res);
}
