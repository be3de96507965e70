import { schemaViolations } from '@org/workflow-compiler';
import { TestRunnerError, type TestRunnerErrorCode, type TestRunnerErrorDetail } from '../errors.js';

// The compiler's schema runner (one way to describe a violation without its value); this file only adds the file
// name and the test runner's error class. The validators are generated at build time (src/generated/validators.js,
// scripts/generate-validators.ts) with the options of the compiler's `compileSchema`: no schema is compiled, and
// ajv is not loaded, at run time (docs/adr/0148).

/** A validator: the generated ones (src/generated/validators.js) and ajv's compiled functions have this shape. */
export type SchemaValidator = ReturnType<Parameters<typeof schemaViolations>[0]>;

/** At most this many details are reported for one failure. */
export const MAX_ERROR_DETAILS = 50;

/**
 * Runs a schema and throws `code` naming `file` and every violation in `details.errors` as `{ file, pointer, detail }`. Details say
 * what was expected and the type and size found, never the value (a test file may hold credentials).
 */
export function checkSchema(
  validator: SchemaValidator,
  value: unknown,
  code: TestRunnerErrorCode,
  file: string,
): void {
  const violations = schemaViolations(() => validator, value);
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
