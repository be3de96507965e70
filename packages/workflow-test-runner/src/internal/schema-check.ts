import { compileSchema, schemaViolations, type LazyValidator } from '@org/workflow-compiler';
import { TestRunnerError, type TestRunnerErrorCode, type TestRunnerErrorDetail } from '../errors.js';

// The compiler's schema runner (one Ajv set-up, one way to describe a violation without its value); this file
// only adds the file name and the test runner's error class.
export { compileSchema };

/** At most this many details are reported for one failure. */
export const MAX_ERROR_DETAILS = 50;

/**
 * Runs a schema and throws `code` naming `file` and every violation in `details.errors` as `{ file, pointer, detail }`. Details say
 * what was expected and the type and size found, never the value (a test file may hold credentials).
 */
export function checkSchema(
  lazy: LazyValidator,
  value: unknown,
  code: TestRunnerErrorCode,
  file: string,
): void {
  const violations = schemaViolations(lazy, value);
  if (violations !== undefined)
    throwDetails(
      code,
      file,
      violations.map((v) => ({ file, ...v })),
    );
}

/** Throws `code` with the given details (capped), in a message naming the file and the first few pointers. */
export function throwDetails(
  code: TestRunnerErrorCode,
  file: string,
  details: TestRunnerErrorDetail[],
): never {
  const shown = details.slice(0, MAX_ERROR_DETAILS);
  const first = shown
    .slice(0, 3)
    .map((d) => `${d.pointer || '/'}: ${d.detail}`)
    .join('; ');
  const count = details.length === 1 ? '1 error' : `${details.length} errors`;
  throw new TestRunnerError(code, `${file} is invalid (${count}): ${first}`, { details: { errors: shown } });
}
