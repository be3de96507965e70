import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { TestRunnerError, type TestRunnerErrorCode, type TestRunnerErrorDetail } from '../errors.js';
import { describeValue, quoteName, toPointer } from './text.js';

/** At most this many details are reported for one failure; the rest are counted. */
export const MAX_ERROR_DETAILS = 50;

const ajv = new Ajv({
  allErrors: true,
  verbose: true,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
});

/** A schema compiled on first use. */
export type LazyValidator = () => ValidateFunction;

/** Returns a function that compiles `schema` the first time it is called. */
export function compileSchema(schema: object): LazyValidator {
  let compiled: ValidateFunction | undefined;
  return () => (compiled ??= ajv.compile(schema));
}

/**
 * Runs a schema and throws `code` naming `file` and every violation as `{ file, pointer, detail }`. Details say
 * what was expected and the type and size found, never the value (a test file may hold credentials).
 */
export function checkSchema(
  lazy: LazyValidator,
  value: unknown,
  code: TestRunnerErrorCode,
  file: string,
): void {
  const validate = lazy();
  if (validate(value)) return;
  const seen = new Set<string>();
  const details = (validate.errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map((e) => toDetail(e, file))
    .filter((d) => {
      const k = `${d.pointer}\u0000${d.detail}`;
      return seen.has(k) ? false : (seen.add(k), true);
    });
  throwDetails(code, file, details);
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
  throw new TestRunnerError(code, `${file} is invalid (${count}): ${first}`, { details: shown });
}

function child(instancePath: string, name: string): string {
  return `${instancePath}${toPointer([name])}`;
}

function toDetail(e: ErrorObject, file: string): TestRunnerErrorDetail {
  const found = describeValue(e.data);
  const p = e.params as Record<string, unknown>;
  const described = (e.parentSchema as { description?: string } | undefined)?.description;
  switch (e.keyword) {
    case 'required':
      return {
        file,
        pointer: child(e.instancePath, String(p['missingProperty'])),
        detail: 'missing required property',
      };
    case 'additionalProperties': {
      const name = String(p['additionalProperty']);
      return { file, pointer: child(e.instancePath, name), detail: `unknown property ${quoteName(name)}` };
    }
    case 'type':
      return { file, pointer: e.instancePath, detail: `expected ${String(p['type'])}, found ${found}` };
    case 'enum': {
      const allowed = (p['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return { file, pointer: e.instancePath, detail: `expected one of ${allowed}, found ${found}` };
    }
    case 'not':
    case 'oneOf':
    case 'anyOf':
      return { file, pointer: e.instancePath, detail: described ?? e.message ?? 'invalid' };
    default:
      return { file, pointer: e.instancePath, detail: `${e.message ?? 'invalid'}, found ${found}` };
  }
}
