import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ErrorObject } from 'ajv';
import { isStrictJsonError, parseStrictJson, type StrictJsonErrorCode } from '@org/strict-json';
import { RequestError, type FieldError, type RequestErrorCode } from './errors.js';
import { AJV_OPTIONS } from './internal/ajv-options.js';
import { nonIntegerSpellings } from './internal/number-spelling.js';

/** Nesting cap of a `body` part (S3). */
export const MAX_BODY_DEPTH = 64;

let ajv: AjvClass | undefined;

/**
 * The Ajv instance of {@link bodyValidator}, created on its first call. ajv (CommonJS) is loaded here, not imported
 * at the top: the packager's own request validators are generated at build time (src/generated/validators.js), so
 * an importer that compiles no schema never loads ajv (docs/adr/0148).
 */
function runtimeAjv(): AjvClass {
  if (ajv === undefined) {
    const { Ajv } = createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvClass };
    ajv = new Ajv(AJV_OPTIONS);
  }
  return ajv;
}

/** A compiled schema: ajv's compiled functions and the standalone ones generated at build time have this shape. */
export type SchemaValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

function fieldErrorOf(e: ErrorObject): FieldError {
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  if (e.keyword === 'required' && params.missingProperty !== undefined)
    return { pointer: `${e.instancePath}/${params.missingProperty}`, detail: 'is required' };
  if (e.keyword === 'additionalProperties' && params.additionalProperty !== undefined)
    return { pointer: `${e.instancePath}/${params.additionalProperty}`, detail: 'is not a known field' };
  return { pointer: e.instancePath, detail: e.message ?? 'is invalid' };
}

/** A validator for one documented body schema. */
export type BodyValidator<T> = (value: unknown) => T;

/**
 * The pointers of the numbers a parsed `body` part spelt with a fraction, an exponent or as minus zero
 * (`"sequence": 1e3`), by the value {@link parseBody} returned. The schema sees only the number (1000), so the
 * validator refuses these spellings itself: every number member of a request body is an integer.
 */
const spellings = new WeakMap<object, readonly string[]>();

const NOT_AN_INTEGER_SPELLING = 'must be written as a whole number, without fraction, exponent or minus zero';

/**
 * Compiles a body validator. A failure is `REQUEST_FIELD_INVALID` naming every failing field by JSON pointer
 * (never its value, so no key material reaches a response); a number member {@link parseBody} read with a
 * fraction, an exponent or as minus zero fails even when the number it stands for is an integer (`1e3`,
 * `7.0000000000000001`), as every number member of a request body is an integer.
 */
export function bodyValidator<T>(schema: object): BodyValidator<T> {
  return checkedBody<T>(runtimeAjv().compile(schema));
}

/** {@link bodyValidator} over a compiled schema (the request schemas' validators generated at build time). */
export function checkedBody<T>(validate: SchemaValidator): BodyValidator<T> {
  return (value) => {
    const spelt = (typeof value === 'object' && value !== null ? spellings.get(value) : undefined) ?? [];
    const valid = validate(value);
    if (valid && spelt.length === 0) return value as T;
    const seen = new Set<string>();
    const reported = new Set<string>();
    const schemaErrors = (valid ? [] : (validate.errors ?? [])).map(fieldErrorOf).filter((e) => {
      const key = `${e.pointer}\u0000${e.detail}`;
      reported.add(e.pointer);
      return seen.has(key) ? false : (seen.add(key), true);
    });
    const errors = [
      ...schemaErrors,
      ...spelt
        .filter((pointer) => !reported.has(pointer))
        .map((pointer) => ({ pointer, detail: NOT_AN_INTEGER_SPELLING })),
    ];
    const first = errors[0] ?? { pointer: '', detail: 'is invalid' };
    throw new RequestError('REQUEST_FIELD_INVALID', `body field ${first.pointer || '/'} ${first.detail}`, {
      errors,
    });
  };
}

/** The packager's code for each strict-JSON failure of a request body (ADR 0096: never a package's format code). */
const BODY_CODE_OF = {
  JSON_TOO_LARGE: 'REQUEST_BODY_TOO_LARGE',
  JSON_BAD_UTF8: 'REQUEST_BODY_NOT_JSON',
  JSON_INVALID: 'REQUEST_BODY_NOT_JSON',
  JSON_DUPLICATE_KEY: 'REQUEST_BODY_DUPLICATE_KEY',
  JSON_LONE_SURROGATE: 'REQUEST_BODY_NOT_JSON',
  JSON_TOO_DEEP: 'REQUEST_BODY_TOO_DEEP',
  JSON_BAD_NUMBER: 'REQUEST_BODY_NOT_JSON',
} as const satisfies Record<StrictJsonErrorCode, RequestErrorCode>;

/**
 * Parses the `body` part strictly: UTF-8, no duplicate keys (S65), depth cap (S3), `__proto__` kept as a
 * plain key (S4; then refused as an unknown field). Numbers spelt with a fraction, an exponent or as minus zero
 * are noted for the validator ({@link bodyValidator} refuses them as REQUEST_FIELD_INVALID, naming the field).
 * @throws RequestError `REQUEST_BODY_TOO_LARGE`, `REQUEST_BODY_NOT_JSON`, `REQUEST_BODY_DUPLICATE_KEY`,
 *   `REQUEST_BODY_TOO_DEEP`.
 */
export function parseBody(text: string, maxBytes: number): unknown {
  // Parsed as the text it already is (measured as UTF-8 against `maxBytes`, lone surrogates refused): no
  // UTF-8 copy of the request's key text is made, so none is left to zero (ADR 0112).
  let value: unknown;
  try {
    value = parseStrictJson(text, { maxBytes, maxDepth: MAX_BODY_DEPTH });
  } catch (err) {
    if (!isStrictJsonError(err)) throw err;
    throw new RequestError(BODY_CODE_OF[err.code], `body: ${err.message}`, { cause: err });
  }
  if (typeof value === 'object' && value !== null) {
    const spelt = nonIntegerSpellings(text);
    if (spelt.length > 0) spellings.set(value, spelt);
  }
  return value;
}
