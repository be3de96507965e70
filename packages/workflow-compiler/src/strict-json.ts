import { isStrictJsonError, parseStrictJson as parseJson, type StrictJsonErrorCode } from '@org/strict-json';
import { WorkflowError, type WorkflowErrorCode } from './errors.js';
import { emptyObject, MAX_JSON_DEPTH, type JsonValue } from './json-value.js';

/** Default byte cap for one JSON document (8 MiB). */
export const MAX_JSON_BYTES = 8 * 1024 * 1024;

/** Options of {@link parseStrictJson}. */
export interface ParseStrictJsonOptions {
  /** Largest accepted input in bytes (UTF-8). Default {@link MAX_JSON_BYTES}. */
  maxBytes?: number;
  /** Deepest accepted nesting of arrays and objects. Default {@link MAX_JSON_DEPTH} (64). */
  maxDepth?: number;
}

/** This package's code for each failure of the repository's one strict parser (@org/strict-json, bundled). */
const CODE_OF = {
  JSON_TOO_LARGE: 'WORKFLOW_JSON_TOO_LARGE',
  JSON_BAD_UTF8: 'WORKFLOW_JSON_BAD_UTF8',
  JSON_INVALID: 'WORKFLOW_JSON_INVALID',
  JSON_DUPLICATE_KEY: 'WORKFLOW_JSON_DUPLICATE_KEY',
  JSON_LONE_SURROGATE: 'WORKFLOW_JSON_LONE_SURROGATE',
  JSON_TOO_DEEP: 'WORKFLOW_JSON_TOO_DEEP',
  JSON_BAD_NUMBER: 'WORKFLOW_JSON_BAD_NUMBER',
} as const satisfies Record<StrictJsonErrorCode, WorkflowErrorCode>;

/**
 * Parses RFC 8259 JSON text strictly (SPEC.md §3): fatal UTF-8, no BOM, no duplicate keys, no lone surrogates,
 * bounded depth and size, integers within ±(2^53−1). Objects come back inheriting nothing (see `emptyObject`), so
 * `__proto__` and `constructor` are plain data keys (docs/security-requirements.md S4).
 *
 * @throws WorkflowError `WORKFLOW_JSON_TOO_LARGE`, `WORKFLOW_JSON_BAD_UTF8`, `WORKFLOW_JSON_INVALID`,
 *   `WORKFLOW_JSON_DUPLICATE_KEY`, `WORKFLOW_JSON_LONE_SURROGATE`, `WORKFLOW_JSON_TOO_DEEP`, `WORKFLOW_JSON_BAD_NUMBER`.
 */
export function parseStrictJson(input: Uint8Array | string, options: ParseStrictJsonOptions = {}): JsonValue {
  try {
    return parseJson(input, {
      maxBytes: options.maxBytes ?? MAX_JSON_BYTES,
      maxDepth: options.maxDepth ?? MAX_JSON_DEPTH,
      newObject: emptyObject,
    });
  } catch (err) {
    if (!isStrictJsonError(err)) throw err;
    const code = CODE_OF[err.code];
    const located = code !== 'WORKFLOW_JSON_TOO_LARGE' && code !== 'WORKFLOW_JSON_BAD_UTF8';
    throw new WorkflowError(code, err.message, {
      cause: err,
      ...(located ? { details: { errors: [{ pointer: '', detail: err.details.reason }] } } : {}),
    });
  }
}
