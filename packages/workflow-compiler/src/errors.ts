/**
 * Every code a {@link WorkflowError} can carry. Codes are stable public API: renaming or removing one is a major
 * change. The first group are syntax errors (the bytes are not acceptable JSON text); the rest are semantic
 * errors (well-formed JSON that breaks a rule). See {@link WORKFLOW_SYNTAX_ERROR_CODES}.
 */
export const WORKFLOW_ERROR_CODES = Object.freeze([
  // Syntax: malformed JSON text (an HTTP front end maps these to 400).
  'WORKFLOW_JSON_INVALID',
  'WORKFLOW_JSON_BAD_UTF8',
  'WORKFLOW_JSON_LONE_SURROGATE',
  'WORKFLOW_JSON_DUPLICATE_KEY',
  'WORKFLOW_JSON_TOO_DEEP',
  'WORKFLOW_JSON_TOO_LARGE',
  'WORKFLOW_JSON_BAD_NUMBER',
  // Semantic: schema and rule violations (422).
  'WORKFLOW_SCHEMA_INVALID',
  'WORKFLOW_DUPLICATE_STEP_ID',
  'WORKFLOW_NOT_COMPILED',
  'WORKFLOW_NOT_CANONICAL',
  'WORKFLOW_VALUE_INVALID',
  'WORKFLOW_BOOTSTRAP_INVALID',
  'WORKFLOW_BOOTSTRAP_DUPLICATE_ID',
  'WORKFLOW_BOOTSTRAP_KEY_INVALID',
  'WORKFLOW_BOOTSTRAP_KEY_REFERENCE',
  'WORKFLOW_BOOTSTRAP_SIGNER_CONFLICT',
  'WORKFLOW_BOOTSTRAP_SIGNER_COUNT',
  'WORKFLOW_VARIABLE_MISSING',
  'WORKFLOW_VARIABLE_INVALID',
  'WORKFLOW_VARIABLE_TOO_LARGE',
  'WORKFLOW_SECRETS_FILE_INVALID',
  'WORKFLOW_RESOURCE_PATH_INVALID',
  'WORKFLOW_RESOURCE_OUTSIDE_ROOT',
  'WORKFLOW_RESOURCE_NOT_FOUND',
  'WORKFLOW_RESOURCE_TOO_LARGE',
  'WORKFLOW_RESOURCE_BAD_UTF8',
  'WORKFLOW_COMPILED_TOO_LARGE',
  'WORKFLOW_MANIFEST_INVALID',
  'WORKFLOW_MANIFEST_TOO_MANY_INCLUDES',
  'WORKFLOW_MANIFEST_DUPLICATE_INCLUDE',
  'WORKFLOW_MANIFEST_PATH_INVALID',
  'WORKFLOW_MANIFEST_PATH_NOT_FOUND',
  'WORKFLOW_MANIFEST_OP_UNKNOWN',
  'WORKFLOW_MANIFEST_OP_INVALID',
  'WORKFLOW_MANIFEST_CONFLICT',
] as const);

/** A code from {@link WORKFLOW_ERROR_CODES}. */
export type WorkflowErrorCode = (typeof WORKFLOW_ERROR_CODES)[number];

/**
 * The codes that mean "the input is not acceptable JSON text" (malformed, over a parse limit). Every other code
 * is semantic: the JSON was read but breaks a schema or rule.
 */
export const WORKFLOW_SYNTAX_ERROR_CODES: readonly WorkflowErrorCode[] = Object.freeze([
  'WORKFLOW_JSON_INVALID',
  'WORKFLOW_JSON_BAD_UTF8',
  'WORKFLOW_JSON_LONE_SURROGATE',
  'WORKFLOW_JSON_DUPLICATE_KEY',
  'WORKFLOW_JSON_TOO_DEEP',
  'WORKFLOW_JSON_TOO_LARGE',
  'WORKFLOW_JSON_BAD_NUMBER',
] as const);

/** One failed field: where (RFC 6901 JSON pointer) and what (never the value itself). */
export interface WorkflowErrorDetail {
  pointer: string;
  detail: string;
}

/**
 * Structured context of a {@link WorkflowError}: a plain record, as the `details` of every package's error is.
 * Field failures are listed under `errors` (at most 100, then one entry counting the rest), the same member name
 * as the `errors` of an HTTP problem body.
 */
export interface WorkflowErrorDetails {
  /** The failed fields, in the order found. */
  readonly errors?: readonly WorkflowErrorDetail[];
  /** Other non-secret facts. */
  readonly [key: string]: unknown;
}

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class WorkflowError extends Error {
  override readonly name = 'WorkflowError';
  constructor(
    readonly code: WorkflowErrorCode,
    message: string,
    options?: ErrorOptions & { details?: WorkflowErrorDetails },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
  /** Structured context, for example `{ errors: [{ pointer, detail }] }` for failed fields. Never secret. */
  readonly details?: WorkflowErrorDetails;
}

/**
 * Whether a code is a syntax error (malformed JSON, 400 at an HTTP front end) rather than a semantic one (422).
 *
 * @param code - any string; unknown codes are not syntax codes.
 */
export function isSyntaxErrorCode(code: string): boolean {
  return (WORKFLOW_SYNTAX_ERROR_CODES as readonly string[]).includes(code);
}

/**
 * Duck-typed guard for a {@link WorkflowError}: `name` and membership of {@link WORKFLOW_ERROR_CODES}, so it
 * works across two loaded copies of this package, where `instanceof` does not.
 */
export function isWorkflowError(err: unknown): err is WorkflowError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'WorkflowError' &&
    typeof e.code === 'string' &&
    (WORKFLOW_ERROR_CODES as readonly string[]).includes(e.code)
  );
}
