import { WorkflowError } from './errors.js';
import { isWellFormedString } from './internal/well-formed.js';

/** A JSON value as this package holds it: objects inherit nothing (S4). */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A JSON object. Objects produced by this package inherit nothing (their prototype is a frozen empty object without a prototype). */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Nesting cap for arrays and objects (docs/security-requirements.md S3). */
export const MAX_JSON_DEPTH = 64;

/** True for a non-null, non-array object. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The prototype of every object this package creates: an empty, frozen object that itself has no prototype. Its
 * objects therefore inherit nothing (no `Object.prototype`, no `__proto__` accessor, no `constructor`), so
 * `__proto__` and `constructor` are plain data keys (S4). Unlike `Object.create(null)`, V8 keeps such objects in
 * fast mode, which halves parse time (ADR 0014).
 */
export const JSON_OBJECT_PROTOTYPE: object = Object.freeze(Object.create(null) as object);

/** A new empty object that inherits nothing: `__proto__` and `constructor` stay plain data keys. */
export function emptyObject(): JsonObject {
  return Object.create(JSON_OBJECT_PROTOTYPE) as JsonObject;
}

/** True for objects a JSON object may be: plain, prototype-less, or created by {@link emptyObject}. */
export function isPlainPrototype(proto: unknown): boolean {
  return proto === null || proto === Object.prototype || proto === JSON_OBJECT_PROTOTYPE;
}

/** Own property lookup that never consults a prototype. */
export function hasKey(o: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

/** Describes a value by type and size, never by content (error messages must not echo secrets). */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (typeof v === 'string') return `string of length ${v.length}`;
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** A short, escaped rendering of a property name for messages (names are not secret, but may be hostile). */
export function quoteName(name: string): string {
  const cut = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return JSON.stringify(cut);
}

/** RFC 6901 pointer for a list of segments. */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Deep-copies a caller-supplied value into this package's JSON form (objects that inherit nothing), rejecting anything
 * that is not JSON: `undefined`, functions, non-finite numbers, unsafe integers, cycles, depth over the cap.
 *
 * @throws WorkflowError `WORKFLOW_VALUE_INVALID` for a non-JSON value; `WORKFLOW_JSON_TOO_DEEP` over the depth cap.
 */
export function toJsonValue(v: unknown, depth = 0, path: (string | number)[] = []): JsonValue {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    if (!isWellFormedString(v)) throw invalid(path, 'string contains a lone surrogate');
    return v;
  }
  if (typeof v === 'number') return checkNumber(v, path);
  if (typeof v !== 'object') throw invalid(path, `${typeof v} is not a JSON value`);
  if (depth >= MAX_JSON_DEPTH) {
    throw new WorkflowError('WORKFLOW_JSON_TOO_DEEP', `value nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (Array.isArray(v)) {
    return v.map((item: unknown, i) => {
      path.push(i);
      const copy = toJsonValue(item, depth + 1, path);
      path.pop();
      return copy;
    });
  }
  if (!isPlainPrototype(Object.getPrototypeOf(v))) throw invalid(path, 'only plain objects are JSON values');
  const out = emptyObject();
  for (const key of Object.keys(v)) {
    path.push(key);
    out[key] = toJsonValue((v as Record<string, unknown>)[key], depth + 1, path);
    path.pop();
  }
  return out;
}

function checkNumber(n: number, path: (string | number)[]): number {
  if (!Number.isFinite(n)) throw invalid(path, 'number is not finite');
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) throw invalid(path, 'integer beyond 2^53-1');
  return n;
}

function invalid(path: (string | number)[], what: string): WorkflowError {
  const pointer = toPointer(path);
  return new WorkflowError('WORKFLOW_VALUE_INVALID', `not a JSON value at ${pointer || '/'}: ${what}`, {
    details: { errors: [{ pointer, detail: what }] },
  });
}
