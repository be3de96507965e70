import { emptyObject, isJsonObject, type JsonObject, type JsonValue } from '../json-value.js';
import { STEP_PROCESSOR_FIELDS } from '../workflow-schema.js';

/** Keys whose values are free-form data, never workflow structure (SPEC.md §4.1). */
export const FREE_FORM_KEYS: ReadonlySet<string> = new Set(['data', 'value']);

/** Path segments from the root of the file. */
export type Segments = (string | number)[];

/**
 * A schema-valid workflow file without its `comment` keys. Free-form values (`data`, `messages[].value`) are kept
 * as they are, `comment` keys inside them included: they are data a script can read (ADR 0011).
 *
 * Works on the value it is given, which must be the caller's own (the compiler's parsed or copied input): arrays
 * and objects without a `comment` key are kept and their members updated in place; an object with one is
 * replaced by a copy without it (deleting the key would leave V8 a slow dictionary object). Copying every object,
 * as this once did, cost a compile one allocation per object.
 */
export function stripComments(v: JsonValue): JsonValue {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const child = v[i] as JsonValue;
      const stripped = stripComments(child);
      if (stripped !== child) v[i] = stripped;
    }
    return v;
  }
  if (!isJsonObject(v)) return v;
  const keys = Object.keys(v);
  let out = v;
  if (keys.includes('comment')) {
    out = emptyObject();
    for (const key of keys) if (key !== 'comment') out[key] = v[key] as JsonValue;
  }
  for (const key of keys) {
    if (key === 'comment' || FREE_FORM_KEYS.has(key)) continue;
    const child = out[key] as JsonValue;
    const stripped = stripComments(child);
    if (stripped !== child) out[key] = stripped;
  }
  return out;
}

/**
 * Called for each processor with a function giving its location (a fresh array each call). The location is built
 * only when asked for: the walks of a valid workflow never need it, and building it for every processor was a
 * large part of a compile.
 */
type ProcessorVisitor = (processor: JsonObject, at: () => Segments) => void;

/** Calls `visit` for every processor of a schema-valid workflow file, parents before nested chain members. */
export function forEachProcessor(file: JsonObject, visit: ProcessorVisitor): void {
  new ProcessorWalk(visit).file(file);
}

/** The walk of {@link forEachProcessor}: one mutable path, copied only when a visitor asks where it is. */
class ProcessorWalk {
  private readonly path: Segments = [];
  private readonly at = (): Segments => this.path.slice();

  constructor(private readonly visit: ProcessorVisitor) {}

  file(file: JsonObject): void {
    const path = this.path;
    path.push('defaultStepProperties');
    this.stepLike(file['defaultStepProperties']);
    path.pop();
    const workflows = file['workflows'];
    if (!Array.isArray(workflows)) return;
    path.push('workflows');
    for (let w = 0; w < workflows.length; w++) {
      const wf = workflows[w];
      if (!isJsonObject(wf)) continue;
      path.push(w, 'defaultStepProperties');
      this.stepLike(wf['defaultStepProperties']);
      path.pop();
      const steps = wf['steps'];
      if (Array.isArray(steps)) {
        path.push('steps');
        for (let i = 0; i < steps.length; i++) {
          path.push(i);
          this.stepLike(steps[i]);
          path.pop();
        }
        path.pop();
      }
      path.pop();
    }
    path.pop();
  }

  private stepLike(step: JsonValue | undefined): void {
    if (!isJsonObject(step)) return;
    const path = this.path;
    for (let f = 0; f < STEP_PROCESSOR_FIELDS.length; f++) {
      const field = STEP_PROCESSOR_FIELDS[f] as string;
      const p = step[field];
      if (!isJsonObject(p)) continue;
      path.push(field);
      this.processor(p);
      path.pop();
    }
    const handling = step['httpStatusHandling'];
    if (!isJsonObject(handling)) return;
    path.push('httpStatusHandling');
    for (const status of Object.keys(handling)) {
      const p = handling[status];
      if (status === 'comment' || !isJsonObject(p)) continue;
      path.push(status);
      this.processor(p);
      path.pop();
    }
    path.pop();
  }

  private processor(p: JsonObject): void {
    this.visit(p, this.at);
    const chain = p['processors'];
    if (!Array.isArray(chain)) return;
    const path = this.path;
    path.push('processors');
    for (let i = 0; i < chain.length; i++) {
      const c = chain[i];
      if (!isJsonObject(c)) continue;
      path.push(i);
      this.processor(c);
      path.pop();
    }
    path.pop();
  }
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
