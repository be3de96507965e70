/**
 * Every code an {@link OappError} can carry, in three families that callers treat differently
 * (SPEC.md §8): `FORMAT_*` malformed or over-limit bytes; `CRYPTO_*` a key, box, digest or
 * payload that does not authenticate; `POLICY_*` a well-formed, authentic package that the
 * deployment's policy refuses. Codes are stable public API.
 */
export const OAPP_ERROR_CODES = Object.freeze([
  'FORMAT_BAD_MAGIC',
  'FORMAT_VERSION_UNSUPPORTED',
  'FORMAT_BAD_FLAGS',
  'FORMAT_BAD_SECTIONS',
  'FORMAT_SECTION_TOO_LARGE',
  'FORMAT_TRUNCATED',
  'FORMAT_TRAILING_DATA',
  'FORMAT_BAD_UTF8',
  'FORMAT_JSON_INVALID',
  'FORMAT_JSON_DUPLICATE_KEY',
  'FORMAT_JSON_TOO_DEEP',
  'FORMAT_UNKNOWN_FIELD',
  'FORMAT_BAD_FIELD',
  'FORMAT_UNSUPPORTED_ALGORITHM',
  'FORMAT_BAD_RECIPIENTS',
  'FORMAT_DUPLICATE_RECIPIENT',
  'FORMAT_DUPLICATE_NONCE',
  'FORMAT_BAD_SIGNATURES',
  'FORMAT_TOO_MANY_SIGNATURES',
  'FORMAT_TOO_MANY_RECIPIENTS',
  'FORMAT_BAD_PAYLOAD_LENGTH',
  'FORMAT_PAYLOAD_TOO_LARGE',
  'FORMAT_STATEMENT_MISMATCH',
  'FORMAT_WRONG_KIND',
  'FORMAT_BAD_BASE64',
  'FORMAT_BAD_ARGUMENT',
  'CRYPTO_WEAK_KEY',
  'CRYPTO_INVALID_PUBLIC_KEY',
  'CRYPTO_NO_MATCHING_RECIPIENT',
  'CRYPTO_AUTH_FAILED',
  'CRYPTO_HEADER_MISMATCH',
  'CRYPTO_CIPHERTEXT_MISMATCH',
  'CRYPTO_CONTENT_MISMATCH',
  'POLICY_PACKAGE_ID_MISMATCH',
  'POLICY_PACKAGER_NOT_TRUSTED',
  'POLICY_SIGNATURE_INVALID',
  'POLICY_REQUIRED_SIGNER_MISSING',
  'POLICY_SIGNER_THRESHOLD_NOT_MET',
  'POLICY_INVALID',
  'POLICY_ROLLBACK',
  'POLICY_BELOW_MINIMUM',
  'POLICY_SEQUENCE_REUSED',
  'POLICY_EXPIRED',
] as const);

/** A code from {@link OAPP_ERROR_CODES}. */
export type OappErrorCode = (typeof OAPP_ERROR_CODES)[number];

/** Options of an {@link OappError}. */
export interface OappErrorOptions extends ErrorOptions {
  /** Structured, non-secret context: a field name, a signer id and fingerprint, counts. */
  details?: Readonly<Record<string, unknown>>;
}

/**
 * The one error class of `@org/oapp-format`. Messages are lowercase, name the field or signer,
 * and never carry key material, plaintext or raw package bytes.
 */
export class OappError extends Error {
  override readonly name = 'OappError';
  /** Structured, non-secret context. */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  constructor(
    readonly code: OappErrorCode,
    message: string,
    options?: OappErrorOptions,
  ) {
    super(message, options);
    this.details = options?.details;
  }
}

/** Duck-typed guard (works across two loaded copies of this package). */
export function isOappError(err: unknown): err is OappError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'OappError' &&
    typeof e.code === 'string' &&
    (OAPP_ERROR_CODES as readonly string[]).includes(e.code)
  );
}
