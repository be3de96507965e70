import { hasKey, isJsonObject, toJsonValue, toPointer, type JsonValue } from './json-value.js';

/** One difference between two workflows, located by an RFC 6901 pointer into them. */
export interface WorkflowDifference {
  /** `add`: only in the second; `remove`: only in the first; `replace`: in both, different. */
  op: 'add' | 'remove' | 'replace';
  pointer: string;
  /** The value in the first workflow (`remove`, `replace`). */
  from?: JsonValue;
  /** The value in the second workflow (`add`, `replace`). */
  to?: JsonValue;
}

/**
 * Structural diff of two (compiled) workflows, for reviewers (SPEC.md §9). Objects are compared member by
 * member in sorted name order, arrays index by index (a trailing surplus is `add`/`remove` per element), and
 * anything else by value; a type change is one `replace`. Equal inputs give an empty list. Compile both sides
 * first so that comments and resource references do not show up as differences.
 *
 * @throws WorkflowError `WORKFLOW_VALUE_INVALID` or `WORKFLOW_JSON_TOO_DEEP` when an input is not a JSON value.
 */
export function compareWorkflows(first: unknown, second: unknown): WorkflowDifference[] {
  const out: WorkflowDifference[] = [];
  diff(toJsonValue(first), toJsonValue(second), [], out);
  return out;
}

function diff(a: JsonValue, b: JsonValue, at: (string | number)[], out: WorkflowDifference[]): void {
  if (Array.isArray(a) && Array.isArray(b)) {
    diffArrays(a, b, at, out);
  } else if (isJsonObject(a) && isJsonObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const path = [...at, k];
      if (!hasKey(b, k)) out.push({ op: 'remove', pointer: toPointer(path), from: a[k] });
      else if (!hasKey(a, k)) out.push({ op: 'add', pointer: toPointer(path), to: b[k] });
      else diff(a[k] as JsonValue, b[k] as JsonValue, path, out);
    }
  } else if (a !== b) {
    out.push({ op: 'replace', pointer: toPointer(at), from: a, to: b });
  }
}

function diffArrays(
  a: JsonValue[],
  b: JsonValue[],
  at: (string | number)[],
  out: WorkflowDifference[],
): void {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) diff(a[i] as JsonValue, b[i] as JsonValue, [...at, i], out);
  // Removals from the end first, so that applying the list in order keeps pointers valid (RFC 6902 style).
  for (let i = a.length - 1; i >= common; i--)
    out.push({ op: 'remove', pointer: toPointer([...at, i]), from: a[i] });
  for (let i = common; i < b.length; i++) out.push({ op: 'add', pointer: toPointer([...at, i]), to: b[i] });
}
