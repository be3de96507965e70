import { WorkflowError } from './errors.js';
import { isWellFormedString } from './internal/well-formed.js';
import { FREE_FORM_KEYS } from './internal/walk.js';
import { isPlainPrototype, MAX_JSON_DEPTH, toPointer } from './json-value.js';

// Characters JSON.stringify escapes in a well-formed string; strings without them are quoted as they are.
// eslint-disable-next-line no-control-regex -- control characters must be escaped, which is what this finds
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** Raised inside the fast path; `canonicalize` then locates the offending value for the error message. */
class NotCanonical extends Error {}

/**
 * Serialises a JSON value in the RFC 8785 JSON Canonicalization Scheme (SPEC.md §5): object members sorted by
 * the UTF-16 code units of their names, no whitespace, strings and numbers as ECMAScript `JSON.stringify` writes
 * them. Non-JSON input (`undefined`, functions, non-finite numbers, unsafe integers, lone surrogates, cycles) is
 * rejected, never silently dropped.
 *
 * @throws WorkflowError `WORKFLOW_VALUE_INVALID` for a value that has no canonical JSON form;
 *   `WORKFLOW_JSON_TOO_DEEP` beyond 64 levels of nesting.
 */
export function canonicalize(value: unknown): string {
  return canonicalizeChecked(value, null);
}

/**
 * {@link canonicalize}, and when `forbidden` is given, a member of that name in a structural object (outside
 * free-form `data`/`value` subtrees) throws `WORKFLOW_NOT_COMPILED`. One pass instead of a separate walk.
 *
 * @internal
 */
export function canonicalizeChecked(value: unknown, forbidden: string | null): string {
  const w = new Writer(forbidden, null);
  write(w, value);
  return w.out;
}

/** Receives the canonical text in pieces, in order (a hash's `update`). */
export interface CanonicalSink {
  update(piece: string, encoding: 'utf8'): unknown;
}

/**
 * {@link canonicalizeChecked} into `sink` in pieces of about {@link FLUSH_CHARS} UTF-16 units, without building
 * the whole text: hashing many short pieces costs less than one string of ~10^5 concatenations that must be
 * flattened first. The pieces, joined, are exactly the text {@link canonicalizeChecked} returns.
 *
 * @internal
 */
export function canonicalizeInto(value: unknown, forbidden: string | null, sink: CanonicalSink): void {
  const w = new Writer(forbidden, sink);
  write(w, value);
  if (w.out.length > 0) sink.update(w.out, 'utf8');
}

/** Pieces handed to a sink are at least this long (except the last). */
const FLUSH_CHARS = 16 * 1024;

function write(w: Writer, value: unknown): void {
  try {
    w.value(value, 0, false);
  } catch (err) {
    if (err instanceof NotCanonical) {
      throw (
        locate(value, 0, []) ??
        new WorkflowError('WORKFLOW_VALUE_INVALID', 'value has no canonical JSON form')
      );
    }
    throw err;
  }
}

class Writer {
  /** Quoted member names, per call (names can be data; nothing is kept between calls). */
  private readonly names = new Map<string, string>();
  /** Text not yet handed to the sink (all of it without a sink). */
  out = '';

  constructor(
    private readonly forbidden: string | null,
    private readonly sink: CanonicalSink | null,
  ) {}

  value(v: unknown, depth: number, free: boolean): void {
    switch (typeof v) {
      case 'string':
        this.out += quote(v);
        return;
      case 'number':
        this.out += number(v);
        return;
      case 'boolean':
        this.out += v ? 'true' : 'false';
        return;
      case 'object':
        if (v === null) {
          this.out += 'null';
          return;
        }
        if (depth >= MAX_JSON_DEPTH) throw new NotCanonical();
        if (Array.isArray(v)) this.array(v, depth + 1, free);
        else this.object(v, depth + 1, free);
        if (this.sink !== null && this.out.length >= FLUSH_CHARS) {
          this.sink.update(this.out, 'utf8');
          this.out = '';
        }
        return;
      default:
        throw new NotCanonical();
    }
  }

  array(v: unknown[], depth: number, free: boolean): void {
    this.out += '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) this.out += ',';
      this.value(v[i], depth, free);
    }
    this.out += ']';
  }

  object(v: object, depth: number, free: boolean): void {
    if (!isPlainPrototype(Object.getPrototypeOf(v))) throw new NotCanonical();
    const keys = sortNames(Object.keys(v));
    this.out += '{';
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (i > 0) this.out += ',';
      if (!free && k === this.forbidden) {
        throw new WorkflowError(
          'WORKFLOW_NOT_COMPILED',
          `not a compiled workflow: ${k} members remain; compile it first`,
        );
      }
      const child = (v as Record<string, unknown>)[k];
      this.out += this.name(k);
      this.value(child, depth, free || FREE_FORM_KEYS.has(k));
    }
    this.out += '}';
  }

  name(k: string): string {
    let q = this.names.get(k);
    if (q === undefined) {
      q = `${quote(k)}:`;
      this.names.set(k, q);
    }
    return q;
  }
}

/**
 * Sorts member names by UTF-16 code units (RFC 8785 §3.2.3). String `<`/`>` and the default `sort` both compare
 * code units; insertion sort is several times faster for the small objects workflows consist of.
 */
function sortNames(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const name = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > name) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = name;
  }
  return keys;
}

function quote(s: string): string {
  if (!isWellFormedString(s)) throw new NotCanonical();
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

function number(n: number): string {
  if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n))) throw new NotCanonical();
  // ECMAScript Number-to-String is the RFC 8785 §3.2.2.3 number form; -0 becomes 0.
  return JSON.stringify(n);
}

/** Slow path, only after a failure: finds the first value without a canonical form and says where it is. */
function locate(v: unknown, depth: number, path: (string | number)[]): WorkflowError | null {
  const what = problem(v, depth);
  if (what === 'too deep') {
    return new WorkflowError('WORKFLOW_JSON_TOO_DEEP', `value nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (what !== null) return invalid(path, what);
  if (typeof v !== 'object' || v === null) return null;
  const keys: (string | number)[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v).sort();
  for (const k of keys) {
    const found = locate((v as Record<string | number, unknown>)[k], depth + 1, [...path, k]);
    if (found !== null) return found;
  }
  return null;
}

/** What is wrong with `v` itself (not its children), or null. */
function problem(v: unknown, depth: number): string | null {
  if (typeof v === 'string') return isWellFormedString(v) ? null : 'string contains a lone surrogate';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return 'number is not finite';
    return Number.isInteger(v) && !Number.isSafeInteger(v) ? 'integer beyond 2^53-1' : null;
  }
  if (typeof v === 'boolean' || v === null) return null;
  if (typeof v !== 'object') return `${typeof v} has no JSON form`;
  if (depth >= MAX_JSON_DEPTH) return 'too deep';
  return Array.isArray(v) || isPlainPrototype(Object.getPrototypeOf(v))
    ? null
    : 'only plain objects have a JSON form';
}

function invalid(path: (string | number)[], what: string): WorkflowError {
  const pointer = toPointer(path);
  return new WorkflowError('WORKFLOW_VALUE_INVALID', `no canonical JSON form at ${pointer || '/'}: ${what}`, {
    details: { errors: [{ pointer, detail: what }] },
  });
}
