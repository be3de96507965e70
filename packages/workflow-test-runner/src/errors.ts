/**
 * Every code a {@link TestRunnerError} can carry. Codes are stable public API: renaming or removing one is a major
 * change. A failing *test* is not an error: it is a result with failures. These codes are for input the runner
 * cannot use (a bad config or test file, a path leaving its root) and for the mock server's refusals.
 */
export const TESTRUNNER_ERROR_CODES = Object.freeze([
  'TESTRUNNER_JSON_INVALID',
  'TESTRUNNER_CONFIG_INVALID',
  'TESTRUNNER_TEST_INVALID',
  'TESTRUNNER_PATH_INVALID',
  'TESTRUNNER_PATH_OUTSIDE_ROOT',
  'TESTRUNNER_FILE_NOT_FOUND',
  'TESTRUNNER_FILE_TOO_LARGE',
  'TESTRUNNER_TOO_MANY_TESTS',
  'TESTRUNNER_WORKFLOW_INVALID',
  'TESTRUNNER_BOOTSTRAP_INVALID',
  'TESTRUNNER_HOST_NOT_MOCKED',
  'TESTRUNNER_DEPLOY_FAILED',
  'TESTRUNNER_TIMEOUT',
] as const);

/** A code from {@link TESTRUNNER_ERROR_CODES}. */
export type TestRunnerErrorCode = (typeof TESTRUNNER_ERROR_CODES)[number];

/** One failed field: which file, where in it (RFC 6901 JSON pointer), and what (never the value itself). */
export interface TestRunnerErrorDetail {
  file?: string;
  pointer: string;
  detail: string;
}

/**
 * Structured context of a {@link TestRunnerError}: a plain record, as the `details` of every package's error is.
 * Field failures are listed under `errors`; a wrapped compiler error adds `workflowCode` (and its own `errors`).
 */
export interface TestRunnerErrorDetails {
  /** The failed fields, in the order found (at most 50). */
  readonly errors?: readonly TestRunnerErrorDetail[];
  /** The code of the wrapped compiler error (`TESTRUNNER_WORKFLOW_INVALID`, `TESTRUNNER_BOOTSTRAP_INVALID`). */
  readonly workflowCode?: string;
  /** Other non-secret facts (a host, a path rule). */
  readonly [key: string]: unknown;
}

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class TestRunnerError extends Error {
  override readonly name = 'TestRunnerError';
  /** Structured context, for example `{ errors: [{ file, pointer, detail }] }`. Never secret. */
  readonly details?: TestRunnerErrorDetails;
  constructor(
    readonly code: TestRunnerErrorCode,
    message: string,
    options?: ErrorOptions & { details?: TestRunnerErrorDetails },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
}

/**
 * Whether `err` is a {@link TestRunnerError} (duck-typed on `name` and a known `code`, so that two loaded copies
 * of this package recognise each other's errors).
 *
 * @param err - anything thrown.
 */
export function isTestRunnerError(err: unknown): err is TestRunnerError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'TestRunnerError' &&
    typeof e.code === 'string' &&
    (TESTRUNNER_ERROR_CODES as readonly string[]).includes(e.code)
  );
}
