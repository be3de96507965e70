import { emptyObject, isJsonObject, type JsonObject, type JsonValue } from '../json-value.js';
import { STEP_PROCESSOR_FIELDS } from '../workflow-schema.js';

/** Keys whose values are free-form data, never workflow structure (SPEC.md §4.1). */
export const FREE_FORM_KEYS: ReadonlySet<string> = new Set(['data', 'value']);

/** Path segments from the root of the file. */
export type Segments = (string | number)[];

/**
 * Copies a schema-valid workflow file without its `comment` keys. Free-form values (`data`, `messages[].value`)
 * are kept as they are, `comment` keys inside them included: they are data a script can read (ADR 0011).
 */
export function stripComments(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(stripComments);
  if (!isJsonObject(v)) return v;
  const out = emptyObject();
  for (const key of Object.keys(v)) {
    if (key === 'comment') continue;
    const child = v[key] as JsonValue;
    out[key] = FREE_FORM_KEYS.has(key) ? child : stripComments(child);
  }
  return out;
}

type ProcessorVisitor = (processor: JsonObject, at: Segments) => void;

/** Calls `visit` for every processor of a schema-valid workflow file, parents before nested chain members. */
export function forEachProcessor(file: JsonObject, visit: ProcessorVisitor): void {
  visitStepLike(file['defaultStepProperties'], ['defaultStepProperties'], visit);
  const workflows = file['workflows'];
  if (!Array.isArray(workflows)) return;
  workflows.forEach((wf, w) => {
    if (!isJsonObject(wf)) return;
    visitStepLike(wf['defaultStepProperties'], ['workflows', w, 'defaultStepProperties'], visit);
    const steps = wf['steps'];
    if (Array.isArray(steps)) steps.forEach((s, i) => visitStepLike(s, ['workflows', w, 'steps', i], visit));
  });
}

function visitStepLike(step: JsonValue | undefined, at: Segments, visit: ProcessorVisitor): void {
  if (!isJsonObject(step)) return;
  for (const field of STEP_PROCESSOR_FIELDS) {
    const p = step[field];
    if (isJsonObject(p)) visitProcessor(p, [...at, field], visit);
  }
  const handling = step['httpStatusHandling'];
  if (!isJsonObject(handling)) return;
  for (const status of Object.keys(handling)) {
    const p = handling[status];
    if (status !== 'comment' && isJsonObject(p))
      visitProcessor(p, [...at, 'httpStatusHandling', status], visit);
  }
}

function visitProcessor(p: JsonObject, at: Segments, visit: ProcessorVisitor): void {
  visit(p, at);
  const chain = p['processors'];
  if (!Array.isArray(chain)) return;
  chain.forEach((c, i) => {
    if (isJsonObject(c)) visitProcessor(c, [...at, 'processors', i], visit);
  });
}

/** Every step of a schema-valid file with its location, in document order. */
export function listSteps(file: JsonObject): { step: JsonObject; at: Segments }[] {
  const out: { step: JsonObject; at: Segments }[] = [];
  const workflows = file['workflows'];
  if (!Array.isArray(workflows)) return out;
  workflows.forEach((wf, w) => {
    const steps = isJsonObject(wf) ? wf['steps'] : undefined;
    if (!Array.isArray(steps)) return;
    steps.forEach((step, i) => {
      if (isJsonObject(step)) out.push({ step, at: ['workflows', w, 'steps', i] });
    });
  });
  return out;
}
