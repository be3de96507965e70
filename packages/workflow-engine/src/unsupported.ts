import { RUNNABLE_TYPES } from './engine.js';
import { HOST_SERVED_TYPES } from './host-served.js';
import { loadWorkflow, type ScriptUnit, type StepModel } from './workflow-model.js';

/** Step types of the workflow language (docs/interfaces.md §4.2). */
const STEP_TYPES = ['scripted', 'scripted-split-aggregate', 'scripted-auth', 'httpFile'] as const;

/**
 * Step types `runStep` refuses with `ENGINE_UNSUPPORTED` (derived from what the engine runs; host-served types
 * such as `httpFile` are supported, by the host).
 */
export const UNSUPPORTED_STEP_TYPES: readonly string[] = Object.freeze(
  STEP_TYPES.filter((t) => !RUNNABLE_TYPES.has(t) && !HOST_SERVED_TYPES.has(t)),
);

/** A context call that throws `ENGINE_UNSUPPORTED` in a script, and how a static scan spots it. */
export interface UnsupportedCall {
  /** The name the sandbox puts in its error: `ENGINE_UNSUPPORTED: <call> is not supported by this agent`. */
  readonly call: string;
  /** True when the script text appears to make the call (textual: comments count, aliases are missed). */
  readonly appearsIn: (script: string) => boolean;
}

/**
 * Every context call the sandbox refuses with `ENGINE_UNSUPPORTED` — the one list the start-up report uses
 * (test/unsupported.test.ts checks it against what the sandbox really throws).
 */
export const UNSUPPORTED_CONTEXT_CALLS: readonly UnsupportedCall[] = Object.freeze([]);

/** One unsupported feature a workflow uses, found before anything runs. */
export interface UnsupportedFeature {
  readonly kind: 'step-type' | 'context-call';
  readonly stepId: string;
  /** The step type, or the {@link UnsupportedCall.call} name. */
  readonly name: string;
}

function scriptsOf(model: StepModel): ScriptUnit[] {
  return [...Object.values(model.processors), ...Object.values(model.statusHandlers)].flat();
}

/**
 * Lists, per enabled step, the unsupported step type and every unsupported context call its scripts appear
 * to make (one entry per step and name), so an app can report them at start-up instead of at the first run.
 *
 * @throws EngineError `ENGINE_INVALID_WORKFLOW` when the value is not a compiled workflow file.
 */
export function describeUnsupported(compiledWorkflow: unknown): UnsupportedFeature[] {
  const out: UnsupportedFeature[] = [];
  for (const model of loadWorkflow(compiledWorkflow, {}).values()) {
    if (UNSUPPORTED_STEP_TYPES.includes(model.type))
      out.push({ kind: 'step-type', stepId: model.stepId, name: model.type });
    const scripts = scriptsOf(model).map((u) => u.script);
    for (const c of UNSUPPORTED_CONTEXT_CALLS) {
      if (scripts.some((s) => c.appearsIn(s)))
        out.push({ kind: 'context-call', stepId: model.stepId, name: c.call });
    }
  }
  return out;
}
