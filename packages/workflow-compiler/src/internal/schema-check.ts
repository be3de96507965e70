import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv';
import { AJV_OPTIONS } from './ajv-options.js';
import { WorkflowError, type WorkflowErrorCode, type WorkflowErrorDetail } from '../errors.js';
import { describeValue, quoteName, toPointer } from '../json-value.js';

/** At most this many details are reported for one failure; the rest are counted. */
export const MAX_ERROR_DETAILS = 100;

let ajv: AjvClass | undefined;

/**
 * The one Ajv instance of `compileSchema`, created on first use. ajv (CommonJS) is loaded here, not imported at the
 * top: the validators this package uses are generated at build time (src/generated/validators.js), so an importer
 * that compiles nothing at run time never loads ajv (docs/adr/0148).
 */
function runtimeAjv(): AjvClass {
  if (ajv === undefined) {
    const { Ajv } = createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvClass };
    ajv = new Ajv(AJV_OPTIONS);
  }
  return ajv;
}

/** A schema compiled once, on first use (compiling at import cost every importer ~1 s of start-up). */
export type LazyValidator = () => ValidateFunction;

/**
 * What this module needs of a validator: ajv's compiled functions and the standalone ones generated at build time
 * (src/generated/validators.js, scripts/generate-validators.ts) both have this shape.
 */
export type SchemaValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Returns a function that compiles `schema` the first time it is called and reuses the result. */
export function compileSchema(schema: object): LazyValidator {
  let compiled: ValidateFunction | undefined;
  return () => (compiled ??= runtimeAjv().compile(schema));
}

/**
 * Runs a compiled schema and throws `code` with every violation in `details.errors` as `{ pointer, detail }` (capped at
 * {@link MAX_ERROR_DETAILS}). Details describe what was expected and the type and size found, never the value.
 */
export function checkSchema(
  lazy: () => SchemaValidator,
  value: unknown,
  code: WorkflowErrorCode,
  what: string,
): void {
  const details = schemaViolations(lazy, value);
  if (details !== undefined) throwDetails(code, what, details);
}

/**
 * Every violation of a compiled schema as `{ pointer, detail }`, without duplicates, or undefined when `value`
 * is valid. Details describe what was expected and the type and size found, never the value. Apps with their own
 * error class build their error from this list (the workflow test runner does).
 */
export function schemaViolations(
  lazy: () => SchemaValidator,
  value: unknown,
): WorkflowErrorDetail[] | undefined {
  const validate = lazy();
  if (validate(value)) return undefined;
  return dedupe((validate.errors ?? []).map(toDetail));
}

/** Throws `code` with the given details (capped), in a message that names the first few pointers. */
export function throwDetails(code: WorkflowErrorCode, what: string, details: WorkflowErrorDetail[]): never {
  const shown = details.slice(0, MAX_ERROR_DETAILS);
  const more = details.length - shown.length;
  if (more > 0) shown.push({ pointer: '', detail: `${more} more errors not shown` });
  const first = shown
    .slice(0, 3)
    .map((d) => `${d.pointer || '/'}: ${d.detail}`)
    .join('; ');
  const count = details.length === 1 ? '1 error' : `${details.length} errors`;
  throw new WorkflowError(code, `${what} is invalid (${count}): ${first}`, { details: { errors: shown } });
}

function dedupe(details: WorkflowErrorDetail[]): WorkflowErrorDetail[] {
  const seen = new Set<string>();
  return details.filter((d) => {
    const k = `${d.pointer}\u0000${d.detail}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function child(instancePath: string, name: string): string {
  return `${instancePath}${toPointer([name])}`;
}

function toDetail(e: ErrorObject): WorkflowErrorDetail {
  const found = describeValue(e.data);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return {
        pointer: child(e.instancePath, String(p['missingProperty'])),
        detail: 'missing required property',
      };
    case 'additionalProperties':
      return {
        pointer: child(e.instancePath, String(p['additionalProperty'])),
        detail: `unknown property ${quoteName(String(p['additionalProperty']))}`,
      };
    case 'type':
      return { pointer: e.instancePath, detail: `expected ${String(p['type'])}, found ${found}` };
    case 'enum':
      return {
        pointer: e.instancePath,
        detail: `expected one of ${(p['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, found ${found}`,
      };
    case 'pattern':
      return {
        pointer: e.instancePath,
        detail: `expected a string matching ${String(p['pattern'])}, found ${found}`,
      };
    case 'not':
    case 'if':
    case 'oneOf':
      return { pointer: e.instancePath, detail: explainCombinator(e) };
    default:
      return { pointer: e.instancePath, detail: `${e.message ?? 'invalid'}, found ${found}` };
  }
}

function explainCombinator(e: ErrorObject): string {
  const s = e.parentSchema as { description?: string } | undefined;
  if (s?.description !== undefined) return s.description;
  return e.message ?? 'invalid';
}
