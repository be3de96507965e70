import { parseStrictJson, type JsonValue } from '@org/workflow-compiler';
import { TestRunnerError } from '../errors.js';

/** Largest JSON file the runner reads (config, test, bootstrap): 8 MiB. */
export const MAX_JSON_FILE_BYTES = 8 * 1024 * 1024;

/** Reads JSON with the project's strict parser; a syntax error becomes `TESTRUNNER_JSON_INVALID` naming `file`. */
export function readJson(input: Uint8Array | string, file: string): JsonValue {
  try {
    return parseStrictJson(input, { maxBytes: MAX_JSON_FILE_BYTES });
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    const code = typeof e.code === 'string' ? e.code : 'unknown';
    throw new TestRunnerError('TESTRUNNER_JSON_INVALID', `${file} is not valid JSON: ${String(e.message)}`, {
      cause: err,
      details: { errors: [{ file, pointer: '', detail: code }] },
    });
  }
}

/** `true`/`"true"` → true, anything else → false (schemas already limited the forms). */
export function isTrue(v: unknown): boolean {
  return v === true || v === 'true';
}

/** A plain object copy with no prototype: hostile keys such as `__proto__` stay data. */
export function plainObject<T>(entries: Iterable<[string, T]>): Record<string, T> {
  const o = Object.create(null) as Record<string, T>;
  for (const [k, v] of entries) o[k] = v;
  return o;
}
