import { WorkflowError } from './errors.js';
import { MAX_JSON_DEPTH, toPointer } from './json-value.js';

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

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
  const parts: string[] = [];
  write(value, parts, 0, []);
  return parts.join('');
}

function write(v: unknown, out: string[], depth: number, path: (string | number)[]): void {
  switch (typeof v) {
    case 'string':
      out.push(quote(v, path));
      return;
    case 'number':
      out.push(number(v, path));
      return;
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return;
    case 'object':
      if (v === null) out.push('null');
      else writeContainer(v, out, depth + 1, path);
      return;
    default:
      throw invalid(path, `${typeof v} has no JSON form`);
  }
}

function writeContainer(v: object, out: string[], depth: number, path: (string | number)[]): void {
  if (depth > MAX_JSON_DEPTH) {
    throw new WorkflowError('WORKFLOW_JSON_TOO_DEEP', `value nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (Array.isArray(v)) {
    out.push('[');
    v.forEach((item: unknown, i) => {
      if (i > 0) out.push(',');
      path.push(i);
      write(item, out, depth, path);
      path.pop();
    });
    out.push(']');
    return;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== null && proto !== Object.prototype)
    throw invalid(path, 'only plain objects have a JSON form');
  // Default sort compares UTF-16 code units, exactly what RFC 8785 §3.2.3 requires.
  const keys = Object.keys(v).sort();
  out.push('{');
  keys.forEach((k, i) => {
    if (i > 0) out.push(',');
    out.push(quote(k, path), ':');
    path.push(k);
    write((v as Record<string, unknown>)[k], out, depth, path);
    path.pop();
  });
  out.push('}');
}

function quote(s: string, path: (string | number)[]): string {
  if (LONE_SURROGATE.test(s)) throw invalid(path, 'string contains a lone surrogate');
  return JSON.stringify(s);
}

function number(n: number, path: (string | number)[]): string {
  if (!Number.isFinite(n)) throw invalid(path, 'number is not finite');
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) throw invalid(path, 'integer beyond 2^53-1');
  // ECMAScript Number-to-String is the RFC 8785 §3.2.2.3 number form; -0 becomes 0.
  return JSON.stringify(n);
}

function invalid(path: (string | number)[], what: string): WorkflowError {
  const pointer = toPointer(path);
  return new WorkflowError('WORKFLOW_VALUE_INVALID', `no canonical JSON form at ${pointer || '/'}: ${what}`, {
    details: [{ pointer, detail: what }],
  });
}
