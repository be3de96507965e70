/** Every code a {@link CryptoError} can carry. Codes are stable public API: renaming or removing one is a major change. */
export const CRYPTO_ERROR_CODES = ['CRYPTO_PLACEHOLDER'] as const;

/** A code from {@link CRYPTO_ERROR_CODES}. */
export type CryptoErrorCode = (typeof CRYPTO_ERROR_CODES)[number];

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class CryptoError extends Error {
  override readonly name = 'CryptoError';
  constructor(
    readonly code: CryptoErrorCode,
    message: string,
    options?: ErrorOptions & { details?: unknown },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
  /** Structured context (for example JSON pointers of failed fields). Never secret. */
  readonly details?: unknown;
}
