import { OappError } from '../errors.js';

// Small validators for the JSON objects of the format. Every failure names the field
// (a JSON-pointer-like path) and never echoes the value.

/** A parsed JSON object (null prototype). */
export type JsonObject = Record<string, unknown>;

const HEX_LOWER_RE = /^[0-9a-f]*$/;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(field: string, expected: string): never {
  throw new OappError('FORMAT_BAD_FIELD', `${field}: expected ${expected}`, { details: { field } });
}

/**
 * Checks that `v` is an object with exactly the allowed keys and every required key.
 * @throws {@link OappError} `FORMAT_BAD_FIELD`, `FORMAT_UNKNOWN_FIELD`.
 */
export function expectObject(
  v: unknown,
  field: string,
  required: readonly string[],
  optional: readonly string[] = [],
): JsonObject {
  if (!isObject(v)) return bad(field, 'an object');
  for (const k of Object.keys(v)) {
    if (!required.includes(k) && !optional.includes(k)) {
      throw new OappError(
        'FORMAT_UNKNOWN_FIELD',
        `${field}: unknown field ${JSON.stringify(k.slice(0, 40))}`,
        {
          details: { field: `${field}/${k.slice(0, 40)}` },
        },
      );
    }
  }
  for (const k of required) if (!(k in v)) bad(`${field}/${k}`, 'a value (field is required)');
  return v;
}

/** A string of 1..maxBytes UTF-8 bytes without control characters. */
export function expectString(v: unknown, field: string, maxBytes: number): string {
  if (typeof v !== 'string' || v.length === 0) return bad(field, 'a non-empty string');
  if (Buffer.byteLength(v, 'utf8') > maxBytes) return bad(field, `at most ${maxBytes} bytes`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(v)) return bad(field, 'no control characters');
  return v;
}

/** Exactly the given constant. */
export function expectConst<T extends string>(
  v: unknown,
  field: string,
  value: T,
  code: 'FORMAT_BAD_FIELD' | 'FORMAT_UNSUPPORTED_ALGORITHM' = 'FORMAT_BAD_FIELD',
): T {
  if (v !== value) {
    throw new OappError(code, `${field}: expected ${JSON.stringify(value)}`, { details: { field } });
  }
  return value;
}

/** A non-negative safe integer no larger than `max`. */
export function expectSize(v: unknown, field: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > max) {
    return bad(field, `an integer from 0 to ${max}`);
  }
  return v;
}

/** Lowercase hex of exactly `bytes` bytes (the one case written inside the format). */
export function expectHex(v: unknown, field: string, bytes: number): string {
  if (typeof v !== 'string' || v.length !== bytes * 2 || !HEX_LOWER_RE.test(v)) {
    return bad(field, `${bytes * 2} lowercase hex characters`);
  }
  return v;
}

/** An array of at most `max` items. */
export function expectArray(v: unknown, field: string, max: number): unknown[] {
  if (!Array.isArray(v) || v.length > max) return bad(field, `an array of at most ${max} items`);
  return v;
}

/** An RFC 3339 UTC timestamp with millisecond precision, as `Date.prototype.toISOString` writes it. */
export function expectTimestamp(v: unknown, field: string): string {
  if (
    typeof v !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v) ||
    Number.isNaN(Date.parse(v))
  ) {
    return bad(field, 'an RFC 3339 UTC timestamp like 2026-01-31T12:00:00.000Z');
  }
  if (new Date(v).toISOString() !== v) return bad(field, 'a valid calendar date');
  return v;
}

/**
 * The `format` member of a HEADER or STATEMENT, checked against the frame version before the member set (SPEC.md
 * §4.1 rule 9): another version's object is `FORMAT_BAD_FIELD`, not an unknown member.
 */
export function expectFormat<T extends string>(v: unknown, value: T): T {
  const format = isObject(v) ? v['format'] : undefined;
  return expectConst(format, '/format', value);
}
