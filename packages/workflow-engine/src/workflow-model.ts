import { EngineError } from './errors.js';
import { persistenceSpecOf } from './persistence/step-spec.js';
import type { PersistenceSpec } from './persistence/types.js';

/** A processor flattened to one script, with the data merged down to it (docs/interfaces.md §4.3, §4.6). */
export interface ScriptUnit {
  script: string;
  data: Record<string, unknown>;
}

/** The processor slots of a step, in call-cycle order (README.md "Step flow"). */
export const PROCESSOR_SLOTS = [
  'urlGenerator',
  'payloadGenerator',
  'authenticationProcessor',
  'resultsProcessor',
  'httpConnectFailedProcessor',
  // scripted-split-aggregate only (README.md "Split and aggregate").
  'splitGenerator',
  'itemResultProcessor',
] as const;
export type ProcessorSlot = (typeof PROCESSOR_SLOTS)[number];

/** One enabled step, with defaults applied and processors flattened. */
export interface StepModel {
  stepId: string;
  /** Position of the step's workflow in the file's `workflows` array (ADR 0060). */
  workflowIndex: number;
  /** The workflow's `name`. */
  workflow: string;
  /**
   * Unique within the file: the `stepId` when no other enabled step uses it, else `stepId` + NUL + the workflow
   * index. Keys per-step state (step properties, counters, authentication properties).
   */
  uid: string;
  /** `scripted` (default), `scripted-auth` and `scripted-split-aggregate` run; other types are refused at run time (README.md). */
  type: string;
  trigger: unknown;
  processors: Partial<Record<ProcessorSlot, ScriptUnit[]>>;
  statusHandlers: Record<string, ScriptUnit[]>;
  httpTimeout: number | undefined;
  timestampOverride: number | undefined;
  /** `singleThreaded: "return"`: one run at a time; a concurrent run returns at once (README.md). */
  singleThreaded: boolean;
  /** `persistenceFile` / `persistence` (README.md "Persistence"); undefined when the step has none. */
  persistence: PersistenceSpec | undefined;
  /** The step's merged `data.packagerOperation` (SPEC.md §7.6), as it is; undefined when absent. */
  packagerOperation: unknown;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(message: string): EngineError {
  return new EngineError('ENGINE_INVALID_WORKFLOW', message);
}

/** Own-property copy into a null-prototype object, so `__proto__` keys stay data (S4). */
function define(target: Obj, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Deep merge for `data` (docs/interfaces.md §4.6, DESIGN: objects merge recursively, arrays and scalars of the
 * child replace the parent's). Inputs are never modified.
 */
export function mergeData(parent: unknown, child: unknown): Obj {
  const out = Object.create(null) as Obj;
  if (isObject(parent)) for (const k of Object.keys(parent)) define(out, k, parent[k]);
  if (!isObject(child)) return out;
  for (const k of Object.keys(child)) {
    const prev = Object.prototype.hasOwnProperty.call(out, k) ? out[k] : undefined;
    define(out, k, isObject(prev) && isObject(child[k]) ? mergeData(prev, child[k]) : child[k]);
  }
  return out;
}

/** `true`, `"true"` (any case) → true; `false`, `"false"` → false; anything else → the fallback. */
export function isTrue(v: unknown, fallback: boolean): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  return fallback;
}

/** Flattens a processor (script or chain, recursively) into scripts, merging `data` down. */
export function flattenProcessor(p: unknown, data: Obj, where: string, depth = 0): ScriptUnit[] {
  if (depth > 32) throw invalid(`${where}: processor chain nested too deeply`);
  if (!isObject(p)) throw invalid(`${where}: a processor must be an object`);
  // `"resource": ""` counts as absent (workflow-compiler SPEC.md §4.1).
  if ('resource' in p && p['resource'] !== '')
    throw invalid(`${where}: the workflow is not compiled (a resource reference remains)`);
  const merged = mergeData(data, p['data']);
  if (typeof p['script'] === 'string') return [{ script: p['script'], data: merged }];
  if (Array.isArray(p['processors']) && p['processors'].length > 0) {
    return p['processors'].flatMap((c, i) =>
      flattenProcessor(c, merged, `${where}.processors[${i}]`, depth + 1),
    );
  }
  throw invalid(`${where}: a processor needs a script or a non-empty processors chain`);
}

function stepModel(step: Obj, data: Obj, where: string): StepModel {
  const stepId = step['stepId'];
  if (typeof stepId !== 'string' || stepId === '')
    throw invalid(`${where}: stepId must be a non-empty string`);
  const stepData = mergeData(data, step['data']);
  const processors: StepModel['processors'] = {};
  for (const slot of PROCESSOR_SLOTS) {
    if (step[slot] !== undefined)
      processors[slot] = flattenProcessor(step[slot], stepData, `${stepId}.${slot}`);
  }
  const statusHandlers: Record<string, ScriptUnit[]> = Object.create(null) as Record<string, ScriptUnit[]>;
  const handling = step['httpStatusHandling'];
  if (isObject(handling)) {
    for (const code of Object.keys(handling)) {
      const range = /^([1-5][0-9][0-9])-([1-5][0-9][0-9])$/.exec(code);
      if (range && Number(range[1]) > Number(range[2]))
        throw invalid(`${stepId}.httpStatusHandling.${code}: a status range must not end below its start`);
      statusHandlers[code] = flattenProcessor(
        handling[code],
        stepData,
        `${stepId}.httpStatusHandling.${code}`,
      );
    }
  }
  const num = (v: unknown): number | undefined =>
    typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  return {
    stepId,
    workflowIndex: 0,
    workflow: '',
    uid: stepId,
    type: typeof step['type'] === 'string' ? step['type'] : 'scripted',
    trigger: step['trigger'],
    processors,
    statusHandlers,
    httpTimeout: num(step['httpTimeout']),
    timestampOverride: num(step['timestampOverride']),
    singleThreaded: step['singleThreaded'] === 'return',
    persistence: persistenceSpecOf(step, stepId),
    packagerOperation: stepData['packagerOperation'],
  };
}

/** Applies `defaultStepProperties` (file, then workflow) under the step's own fields; `data` merges deeply. */
function withDefaults(step: Obj, fileDefaults: unknown, wfDefaults: unknown): Obj {
  const out: Obj = { ...(isObject(fileDefaults) ? fileDefaults : {}) };
  for (const src of [wfDefaults, step]) {
    if (!isObject(src)) continue;
    for (const k of Object.keys(src)) define(out, k, k === 'data' ? mergeData(out['data'], src[k]) : src[k]);
  }
  return out;
}

/**
 * Reads a compiled workflow file into enabled steps by {@link StepModel.uid}, in file order. A `stepId` is unique
 * within its workflow; two workflows may use the same one (ADR 0060).
 *
 * @throws EngineError `ENGINE_INVALID_WORKFLOW` when the value is not a compiled workflow file or a workflow
 *   uses a `stepId` twice.
 */
export function loadWorkflow(compiled: unknown, bootstrapData: Obj): Map<string, StepModel> {
  if (!isObject(compiled) || !Array.isArray(compiled['workflows'])) {
    throw invalid('a compiled workflow file must be an object with a workflows array');
  }
  const list: StepModel[] = [];
  const fileData = mergeData(bootstrapData, compiled['data']);
  compiled['workflows'].forEach((wf: unknown, wi) => {
    if (!isObject(wf) || !Array.isArray(wf['steps'])) throw invalid(`workflows[${wi}] needs a steps array`);
    if (!isTrue(wf['enabled'], true)) return;
    const wfData = mergeData(fileData, wf['data']);
    const name = typeof wf['name'] === 'string' ? wf['name'] : '';
    const seen = new Set<string>();
    wf['steps'].forEach((raw: unknown, si) => {
      const where = `workflows[${wi}].steps[${si}]`;
      if (!isObject(raw)) throw invalid(`${where} must be an object`);
      const step = withDefaults(raw, compiled['defaultStepProperties'], wf['defaultStepProperties']);
      if (!isTrue(step['enabled'], true)) return;
      const model = stepModel(step, wfData, where);
      if (seen.has(model.stepId))
        throw invalid(`${where}: stepId ${JSON.stringify(model.stepId)} is used twice in this workflow`);
      seen.add(model.stepId);
      list.push({ ...model, workflowIndex: wi, workflow: name });
    });
  });
  const count = new Map<string, number>();
  for (const m of list) count.set(m.stepId, (count.get(m.stepId) ?? 0) + 1);
  const steps = new Map<string, StepModel>();
  for (const m of list) {
    m.uid = count.get(m.stepId) === 1 ? m.stepId : `${m.stepId}\u0000${m.workflowIndex}`;
    // Only a stepId that itself holds NUL and digits could collide; refuse rather than share state.
    if (steps.has(m.uid)) throw invalid(`workflows[${m.workflowIndex}]: stepId collides with another step`);
    steps.set(m.uid, m);
  }
  return steps;
}
