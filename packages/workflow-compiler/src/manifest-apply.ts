import { WorkflowError, type WorkflowErrorCode } from './errors.js';
import { hasKey, isJsonObject, toJsonValue, type JsonObject, type JsonValue } from './json-value.js';
import { formatManifestPath, type ManifestPathSegment } from './manifest-path.js';

/** The customisation operations of a build manifest (SPEC.md §7.2). */
export const MANIFEST_OPS = ['value', 'add', 'delete'] as const;

/** One of {@link MANIFEST_OPS}. */
export type ManifestOp = (typeof MANIFEST_OPS)[number];

/** A parsed customisation, ready to apply. `where` names it in errors (`includes[0].customizations[2]`). */
export interface Customization {
  op: ManifestOp;
  segments: ManifestPathSegment[];
  value?: JsonValue;
  where: string;
}

/**
 * Applies one customisation to `doc` in place. A missing parent, an array index out of range, an `add` onto an
 * existing scalar, or a `value`/`add` without `sourceValue` is an error. The one tolerated absence: `delete` of an
 * object member that is not there is a no-op (manifests delete optional members, e.g. a step's `trigger`).
 *
 * @throws WorkflowError `WORKFLOW_MANIFEST_PATH_NOT_FOUND`, `WORKFLOW_MANIFEST_OP_INVALID`.
 */
export function applyCustomization(doc: JsonValue, c: Customization): void {
  if (c.segments.length === 0) throw fail('WORKFLOW_MANIFEST_OP_INVALID', c, 'the root $ cannot be a target');
  if (c.op !== 'delete' && c.value === undefined)
    throw fail('WORKFLOW_MANIFEST_OP_INVALID', c, 'sourceValue is required');
  if (c.op === 'delete' && c.value !== undefined) {
    throw fail('WORKFLOW_MANIFEST_OP_INVALID', c, 'delete takes no sourceValue');
  }
  const parent = navigate(doc, c);
  const last = c.segments[c.segments.length - 1] as ManifestPathSegment;
  if (Array.isArray(parent)) applyToArray(parent, last, c);
  else applyToObject(parent, last, c);
}

/** The parent of the target; the error names the first step of the path that is missing or not a container. */
function navigate(doc: JsonValue, c: Customization): JsonObject | JsonValue[] {
  let node = doc;
  for (let i = 0; ; i++) {
    if (!Array.isArray(node) && !isJsonObject(node)) {
      const at = formatManifestPath(c.segments.slice(0, i));
      throw fail('WORKFLOW_MANIFEST_PATH_NOT_FOUND', c, `the parent ${at} is not an object or array`);
    }
    if (i === c.segments.length - 1) return node;
    const next = child(node, c.segments[i] as ManifestPathSegment);
    if (next === undefined) {
      const at = formatManifestPath(c.segments.slice(0, i + 1));
      throw fail('WORKFLOW_MANIFEST_PATH_NOT_FOUND', c, `the parent ${at} does not exist`);
    }
    node = next;
  }
}

function child(node: JsonObject | JsonValue[], seg: ManifestPathSegment): JsonValue | undefined {
  if (Array.isArray(node)) return typeof seg === 'number' ? node[seg] : undefined;
  return typeof seg === 'string' && hasKey(node, seg) ? node[seg] : undefined;
}

function applyToArray(parent: JsonValue[], last: ManifestPathSegment, c: Customization): void {
  if (typeof last !== 'number')
    throw fail('WORKFLOW_MANIFEST_PATH_NOT_FOUND', c, 'a member name on an array');
  const limit = c.op === 'add' ? parent.length : parent.length - 1;
  if (last > limit) throw fail('WORKFLOW_MANIFEST_PATH_NOT_FOUND', c, `index ${last} is past the end`);
  if (c.op === 'value') parent[last] = copy(c.value);
  else if (c.op === 'add') parent.splice(last, 0, copy(c.value));
  else parent.splice(last, 1);
}

function applyToObject(parent: JsonObject, last: ManifestPathSegment, c: Customization): void {
  if (typeof last !== 'string') throw fail('WORKFLOW_MANIFEST_PATH_NOT_FOUND', c, 'an index on an object');
  const exists = hasKey(parent, last);
  if (c.op === 'value') {
    parent[last] = copy(c.value);
  } else if (c.op === 'delete') {
    // SPEC.md §7.2: deleting an absent member is a no-op (the parent itself must exist, checked by navigate).
    if (exists) delete parent[last];
  } else if (!exists) {
    parent[last] = copy(c.value);
  } else {
    addInto(parent[last] as JsonValue, c);
  }
}

/** `add` onto an existing target: append to an array, or add new members to an object (never overwrite). */
function addInto(target: JsonValue, c: Customization): void {
  if (Array.isArray(target)) {
    target.push(copy(c.value));
    return;
  }
  if (!isJsonObject(target) || !isJsonObject(c.value)) {
    throw fail(
      'WORKFLOW_MANIFEST_OP_INVALID',
      c,
      'add onto an existing value needs an array, or an object onto an object; use value to replace',
    );
  }
  const value = c.value;
  const clash = Object.keys(value).find((k) => hasKey(target, k));
  if (clash !== undefined)
    throw fail('WORKFLOW_MANIFEST_OP_INVALID', c, `member ${JSON.stringify(clash)} already exists`);
  for (const k of Object.keys(value)) target[k] = copy(value[k]);
}

function copy(v: JsonValue | undefined): JsonValue {
  return toJsonValue(v);
}

function fail(code: WorkflowErrorCode, c: Customization, why: string): WorkflowError {
  const pointer = `/${c.where.replace(/\[(\d+)\]/g, '/$1').replace(/\./g, '/')}`;
  return new WorkflowError(code, `manifest ${c.where} (op ${c.op}): ${why}`, {
    details: { errors: [{ pointer, detail: why }] },
  });
}
