import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parseStrictJson } from '@org/oapp-format';
import { RequestError, type FieldError } from './errors.js';

/** Nesting cap of a `body` part (S3). */
export const MAX_BODY_DEPTH = 64;

const ajv = new Ajv({ allErrors: true, strict: false });

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
 * Compiles a body validator. A failure is `REQUEST_FIELD_INVALID` naming every failing field by JSON pointer
 * (never its value, so no key material reaches a response).
 */
export function bodyValidator<T>(schema: object): BodyValidator<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value) => {
    if (validate(value)) return value as T;
    const seen = new Set<string>();
    const errors = (validate.errors ?? []).map(fieldErrorOf).filter((e) => {
      const key = `${e.pointer}\u0000${e.detail}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
    const first = errors[0] ?? { pointer: '', detail: 'is invalid' };
    throw new RequestError('REQUEST_FIELD_INVALID', `body field ${first.pointer || '/'} ${first.detail}`, {
      errors,
    });
  };
}

/**
 * Parses the `body` part strictly: UTF-8, no duplicate keys (S65), depth cap (S3), `__proto__` kept as a
 * plain key (S4; then refused as an unknown field).
 * @throws OappError `FORMAT_JSON_*`, `FORMAT_BAD_UTF8`.
 */
export function parseBody(text: string, maxBytes: number): unknown {
  // The bytes carry the request's key text: zeroed once parsed (the strings are beyond reach).
  const bytes = Buffer.from(text, 'utf8');
  try {
    return parseStrictJson(bytes, { what: 'body', maxBytes, maxDepth: MAX_BODY_DEPTH });
  } finally {
    bytes.fill(0);
  }
}
