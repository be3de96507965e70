import type { StepInfo } from './types.js';
import { loadWorkflow, type StepModel } from './workflow-model.js';

/** The {@link StepInfo} of one loaded step (frozen). */
export function stepInfoOf(m: StepModel): StepInfo {
  return Object.freeze({
    stepId: m.stepId,
    workflowIndex: m.workflowIndex,
    workflow: m.workflow,
    trigger: m.trigger,
    type: m.type,
    ...(m.packagerOperation === undefined ? {} : { packagerOperation: m.packagerOperation }),
  });
}

/**
 * The enabled steps of a compiled workflow file exactly as `engine.steps` lists them, without creating an engine
 * (no store is opened): an app wires a deployment's triggers from it and creates the engine on first use. `data` is
 * the bootstrap record's data, as `EngineOptions.data` (it only shows in `packagerOperation`).
 *
 * @throws EngineError `ENGINE_INVALID_WORKFLOW` when the value is not a compiled workflow file.
 */
export function listSteps(compiledWorkflow: unknown, data: Record<string, unknown> = {}): StepInfo[] {
  return [...loadWorkflow(compiledWorkflow, data).values()].map(stepInfoOf);
}
