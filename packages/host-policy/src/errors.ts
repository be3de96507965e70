/** Every code a {@link PolicyError} can carry. Codes are stable public API: renaming or removing one is a major change. */
export const POLICY_ERROR_CODES = ['POLICY_PLACEHOLDER'] as const;

/** A code from {@link POLICY_ERROR_CODES}. */
export type PolicyErrorCode = (typeof POLICY_ERROR_CODES)[number];

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  constructor(
    readonly code: PolicyErrorCode,
    message: string,
    options?: ErrorOptions & { details?: unknown },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
  /** Structured context (for example JSON pointers of failed fields). Never secret. */
  readonly details?: unknown;
}
