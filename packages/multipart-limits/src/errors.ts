/** Every code a {@link UploadError} can carry. Codes are stable public API: renaming or removing one is a major change. */
export const UPLOAD_ERROR_CODES = ['UPLOAD_PLACEHOLDER'] as const;

/** A code from {@link UPLOAD_ERROR_CODES}. */
export type UploadErrorCode = (typeof UPLOAD_ERROR_CODES)[number];

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class UploadError extends Error {
  override readonly name = 'UploadError';
  constructor(
    readonly code: UploadErrorCode,
    message: string,
    options?: ErrorOptions & { details?: unknown },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
  /** Structured context (for example JSON pointers of failed fields). Never secret. */
  readonly details?: unknown;
}
