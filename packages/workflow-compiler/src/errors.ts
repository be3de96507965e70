/** Every code a {@link WorkflowError} can carry. Codes are stable public API: renaming or removing one is a major change. */
export const WORKFLOW_ERROR_CODES = ['WORKFLOW_PLACEHOLDER'] as const;

/** A code from {@link WORKFLOW_ERROR_CODES}. */
export type WorkflowErrorCode = (typeof WORKFLOW_ERROR_CODES)[number];

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class WorkflowError extends Error {
  override readonly name = 'WorkflowError';
  constructor(
    readonly code: WorkflowErrorCode,
    message: string,
    options?: ErrorOptions & { details?: unknown },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
  /** Structured context (for example JSON pointers of failed fields). Never secret. */
  readonly details?: unknown;
}
