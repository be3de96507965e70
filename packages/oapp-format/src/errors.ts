/** Every code a {@link FormatError} can carry. Codes are stable public API: renaming or removing one is a major change. */
export const FORMAT_ERROR_CODES = ['FORMAT_PLACEHOLDER'] as const;

/** A code from {@link FORMAT_ERROR_CODES}. */
export type FormatErrorCode = (typeof FORMAT_ERROR_CODES)[number];

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class FormatError extends Error {
  override readonly name = 'FormatError';
  constructor(
    readonly code: FormatErrorCode,
    message: string,
    options?: ErrorOptions & { details?: unknown },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
  /** Structured context (for example JSON pointers of failed fields). Never secret. */
  readonly details?: unknown;
}
