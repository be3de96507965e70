import type { OperationResult } from '../operation.js';

/** `application/json; charset=utf-8`: the type of every JSON answer (as Express's `res.json` sends it). */
export const JSON_ANSWER_TYPE = 'application/json; charset=utf-8';

/** A JSON answer, serialised as Express's `res.json` does with no replacer and no spaces. */
export function jsonResult(value: unknown, status = 200): OperationResult {
  return { status, type: JSON_ANSWER_TYPE, body: JSON.stringify(value) };
}
