/**
 * Every code a {@link CryptoError} can carry. Codes are stable public API: renaming or removing one
 * is a major change. Parse failures, key-policy failures and authentication failures are kept apart;
 * every failed decryption or MAC check is the one coarse `CRYPTO_AUTH_FAILED`.
 */
export const CRYPTO_ERROR_CODES = Object.freeze([
  /** A hex string has a non-hex character or an odd length. */
  'CRYPTO_BAD_HEX',
  /** A key or digest has the wrong length for what it is. */
  'CRYPTO_BAD_KEY_LENGTH',
  /** A key's purpose does not fit the operation or field (e.g. a `sign` key as a recipient). */
  'CRYPTO_WRONG_KEY_PURPOSE',
  /** A key's type does not fit (e.g. a public key where a secret key is needed). */
  'CRYPTO_WRONG_KEY_TYPE',
  /** An unknown purpose or type value. */
  'CRYPTO_BAD_KEY_SPEC',
  /** A 64-byte sign secret key whose public half is not the key derived from its seed. */
  'CRYPTO_KEY_MISMATCH',
  /** A public key that is not a canonical encoding of a curve point. */
  'CRYPTO_INVALID_PUBLIC_KEY',
  /** An all-zero or small-order public key, or an all-zero X25519 shared secret. */
  'CRYPTO_WEAK_KEY',
  /** Decryption or MAC verification failed. Never says which key or byte. */
  'CRYPTO_AUTH_FAILED',
  /** Text that must be canonical padded standard Base64 is not. */
  'CRYPTO_BAD_BASE64',
  /** Bytes that must be strict UTF-8 are not. */
  'CRYPTO_BAD_UTF8',
  /** An encrypted string does not start with a supported version prefix such as `-2/`. */
  'CRYPTO_BAD_PREFIX',
  /** An envelope is shorter than its fixed overhead. */
  'CRYPTO_TRUNCATED',
  /** A value is larger than its documented limit. */
  'CRYPTO_TOO_LARGE',
  /** A `<sender public key hex>/<secret key hex>` tuple is malformed. */
  'CRYPTO_BAD_KEY_TUPLE',
  /** None of the candidate key tuples opens an encrypted value. */
  'CRYPTO_NO_MATCHING_KEY',
] as const);

/** A code from {@link CRYPTO_ERROR_CODES}. */
export type CryptoErrorCode = (typeof CRYPTO_ERROR_CODES)[number];

/** Options of a {@link CryptoError}. */
export interface CryptoErrorOptions extends ErrorOptions {
  /** Structured, non-secret context (a key id, a position in a list). */
  details?: Readonly<Record<string, unknown>>;
}

/**
 * The one error class of `@org/envelope-crypto`. `code` says what failed; `message` is lowercase,
 * specific and never carries key material, plaintext or raw attacker bytes.
 */
export class CryptoError extends Error {
  override readonly name = 'CryptoError';
  /** Structured, non-secret context. */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  constructor(
    readonly code: CryptoErrorCode,
    message: string,
    options?: CryptoErrorOptions,
  ) {
    super(message, options);
    this.details = options?.details;
  }
}

/**
 * Duck-typed guard for a {@link CryptoError}: works across two loaded copies of this package,
 * where `instanceof` does not.
 */
export function isCryptoError(err: unknown): err is CryptoError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'CryptoError' &&
    typeof e.code === 'string' &&
    (CRYPTO_ERROR_CODES as readonly string[]).includes(e.code)
  );
}
