/**
 * The command line's own error codes (prefix `CLI_`). Library errors (`FORMAT_*`, `CRYPTO_*`, `POLICY_*`,
 * `WORKFLOW_*`) pass through with their own codes; {@link exitCodeOf} decides the exit status.
 */
export const CLI_ERROR_CODES = [
  /** The command line is wrong: unknown option or command, missing argument, bad or conflicting values. */
  'CLI_USAGE',
  /** A command-line value looks like key material (64 or 128 hex digits, or a `<hex>/<hex>` tuple): S153. */
  'CLI_KEY_ON_COMMAND_LINE',
  /** A key file or environment variable is missing, unreadable or not a key record, key-gen JSON or hex. */
  'CLI_KEY_SOURCE',
  /** A key file to be written exists and `--force` was not given (S152): nothing was written. */
  'CLI_OUTPUT_EXISTS',
  /** A file named on the command line cannot be read (missing, a directory, no permission, too large). */
  'CLI_FILE_UNREADABLE',
  /** An output file cannot be written. */
  'CLI_FILE_UNWRITABLE',
  /** The bootstrap given to `--bootstrap` has no usable record (unknown `--deployment`, no `packaging`, …). */
  'CLI_DEPLOYMENT',
  /**
   * `verify-bootstrap`: the bootstrap carries no signature at all (a plain one without its `.sig` file, an
   * encrypted one without signature records): refused, exit 1 (the agent's AGENT_BOOTSTRAP_UNSIGNED).
   */
  'CLI_BOOTSTRAP_UNSIGNED',
  /** An unexpected failure (a bug): reported without a stack trace. */
  'CLI_INTERNAL',
] as const;

/** A code from {@link CLI_ERROR_CODES}. */
export type CliErrorCode = (typeof CLI_ERROR_CODES)[number];

/** Exit statuses (documented in the README). */
export const EXIT_OK = 0;
/** Verification, decryption or validation failed: the input was judged and refused. */
export const EXIT_FAILURE = 1;
/** Usage error: the command line, a key source, a file it names, or the policy/bootstrap it points to. */
export const EXIT_USAGE = 2;
/**
 * The reader of standard output went away (`oapp … | head`): 128 + SIGPIPE, the status a shell reports for a
 * tool the signal stopped. Node ignores SIGPIPE, so the write fails with EPIPE instead; nothing is printed.
 */
export const EXIT_CLOSED_PIPE = 141;

/** The command line's one error class. `code` may also be a library code re-raised with an exit status. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    /** A {@link CliErrorCode}, or a library code re-raised as a usage error. */
    readonly code: string,
    message: string,
    readonly exitCode: number = EXIT_USAGE,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A coded error from any of our packages (duck-typed: two copies of a package may be loaded). */
export interface CodedError {
  readonly name: string;
  readonly code: string;
  readonly message: string;
}

/** True for errors with a stable `UPPER_SNAKE` code. */
export function isCodedError(err: unknown): err is CodedError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    typeof e.name === 'string' &&
    e.name.endsWith('Error') &&
    typeof e.code === 'string' &&
    /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(e.code)
  );
}

/** The exit status for an error thrown while a command ran on its input. */
export function exitCodeOf(err: unknown): number {
  return err instanceof CliError ? err.exitCode : EXIT_FAILURE;
}

/** One error as a `{code, message}` pair; unknown errors become `CLI_INTERNAL` with no detail from the error. */
export function describeError(err: unknown): { code: string; message: string } {
  if (err instanceof CliError || isCodedError(err)) return { code: err.code, message: oneLine(err.message) };
  return { code: 'CLI_INTERNAL', message: 'unexpected error (this is a bug in oapp)' };
}

/** Collapses a message to one line (errors are printed one per line). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ').trim();
}

/**
 * Runs the preparation of a command (reading keys, the policy, the bootstrap): any coded error it throws is a
 * usage error (exit 2) with its code kept and `context` in front of the message.
 */
export async function asUsage<T>(context: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (isCodedError(err)) {
      const message = context === '' ? err.message : `${context}: ${err.message}`;
      throw new CliError(err.code, message, EXIT_USAGE, { cause: err });
    }
    throw err;
  }
}
