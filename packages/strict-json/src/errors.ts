/**
 * Every code a {@link StrictJsonError} can carry. The package is private: each consumer maps these to its own
 * stable codes (`FORMAT_JSON_*`, `WORKFLOW_JSON_*`, `REQUEST_BODY_*`, `AGENT_BODY_*`), so these never reach a user.
 */
export const STRICT_JSON_ERROR_CODES = Object.freeze([
  /** The input is over the caller's byte cap (checked before decoding). */
  'JSON_TOO_LARGE',
  /** The bytes are not valid UTF-8 (fatal decoding: never U+FFFD). */
  'JSON_BAD_UTF8',
  /** The text is not RFC 8259 JSON (including a byte order mark). */
  'JSON_INVALID',
  /** An object names the same key twice (compared after unescaping). */
  'JSON_DUPLICATE_KEY',
  /** A string holds a lone UTF-16 surrogate, escaped or (for a string input) raw. */
  'JSON_LONE_SURROGATE',
  /** Arrays and objects nest deeper than the cap. */
  'JSON_TOO_DEEP',
  /** A number is not exactly representable (an integer beyond ±(2^53 − 1), an overflow), or not an integer when only integers are allowed. */
  'JSON_BAD_NUMBER',
] as const);

/** A code from {@link STRICT_JSON_ERROR_CODES}. */
export type StrictJsonErrorCode = (typeof STRICT_JSON_ERROR_CODES)[number];

/** Structured context of a {@link StrictJsonError}: where parsing stopped and why, never the text itself. */
export interface StrictJsonErrorDetails {
  /** UTF-16 offset into the decoded text where parsing stopped (0 for size and UTF-8 failures). */
  readonly offset: number;
  /** What was wrong, in words (`duplicate property name "a"`); never a slice of the input beyond a short quoted key. */
  readonly reason: string;
  readonly [key: string]: unknown;
}

/**
 * The one error class of this package. `message` is `<reason> (at character <offset>)`, or the reason alone for
 * the failures found before parsing (`JSON_TOO_LARGE`, `JSON_BAD_UTF8`).
 */
export class StrictJsonError extends Error {
  override readonly name = 'StrictJsonError';
  /** Where and why. */
  readonly details: StrictJsonErrorDetails;
  constructor(
    readonly code: StrictJsonErrorCode,
    reason: string,
    offset: number,
    options?: ErrorOptions,
  ) {
    const located = code !== 'JSON_TOO_LARGE' && code !== 'JSON_BAD_UTF8';
    super(located ? `${reason} (at character ${offset})` : reason, options);
    this.details = { offset, reason };
  }
}

/** True for a {@link StrictJsonError}: checked by name and by membership of the code list (duck-typed). */
export function isStrictJsonError(err: unknown): err is StrictJsonError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'StrictJsonError' &&
    typeof e.code === 'string' &&
    (STRICT_JSON_ERROR_CODES as readonly string[]).includes(e.code)
  );
}
