import { isStrictJsonError, parseStrictJson as parseJson, type StrictJsonErrorCode } from '@org/strict-json';
import { OappError, type OappErrorCode } from './errors.js';

// Strict JSON for everything inside the format (SPEC.md §4.1; docs/security-requirements.md S3, S4, S65–S68):
// the repository's one parser (@org/strict-json, bundled into dist), its failures mapped to this package's codes.

/** Options of {@link parseStrictJson}. */
export interface ParseStrictJsonOptions {
  /** Name of the thing parsed, for messages (`HEADER`, `STATEMENT`). */
  what: string;
  /** Byte cap, checked before decoding. */
  maxBytes: number;
  /** Nesting cap (objects and arrays). Default 64. */
  maxDepth?: number;
  /** Reject numbers with a fraction or exponent, minus zero, and integers beyond ±(2^53 − 1). */
  integersOnly?: boolean;
}

/** The format's code for each parser failure: a lone surrogate or a bad number is malformed JSON here. */
const CODE_OF = {
  JSON_TOO_LARGE: 'FORMAT_SECTION_TOO_LARGE',
  JSON_BAD_UTF8: 'FORMAT_BAD_UTF8',
  JSON_INVALID: 'FORMAT_JSON_INVALID',
  JSON_DUPLICATE_KEY: 'FORMAT_JSON_DUPLICATE_KEY',
  JSON_LONE_SURROGATE: 'FORMAT_JSON_INVALID',
  JSON_TOO_DEEP: 'FORMAT_JSON_TOO_DEEP',
  JSON_BAD_NUMBER: 'FORMAT_JSON_INVALID',
} as const satisfies Record<StrictJsonErrorCode, OappErrorCode>;

/**
 * Parses UTF-8 JSON bytes strictly.
 * @throws {@link OappError} `FORMAT_SECTION_TOO_LARGE`, `FORMAT_BAD_UTF8`, `FORMAT_JSON_INVALID`,
 *   `FORMAT_JSON_DUPLICATE_KEY`, `FORMAT_JSON_TOO_DEEP`.
 */
export function parseStrictJson(bytes: Uint8Array, options: ParseStrictJsonOptions): unknown {
  const { what, ...limits } = options;
  try {
    return parseJson(bytes, limits);
  } catch (err) {
    if (!isStrictJsonError(err)) throw err;
    throw new OappError(CODE_OF[err.code], `${what}: ${err.message}`, { cause: err, details: err.details });
  }
}
