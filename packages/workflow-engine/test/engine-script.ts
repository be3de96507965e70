import { asAsync } from '@org/test-utils';
import { createWorkflowEngine } from '../src/index.js';
import type { EngineOptions, StepInput, StepResult, WorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow, type FakeHost } from './fake-host.js';

/** An engine with one step per script (step ids are the keys), on a fresh fake host. */
export async function scriptEngine(
  scripts: Record<string, string>,
  options: Partial<EngineOptions> = {},
): Promise<{ engine: WorkflowEngine; host: FakeHost }> {
  const host = fakeHost();
  const steps = Object.entries(scripts).map(([id, script]) => scriptStep(id, script));
  const engine = await createWorkflowEngine(workflow(steps), { host, data: {}, ...options });
  return { engine, host };
}

/** A step input whose stream yields `bytes` once. */
export function streamInput(bytes: Uint8Array, body?: string): StepInput {
  return input(body, { stream: asAsync([bytes]) });
}

/** Runs a step and parses its body as JSON; a step that errored throws with its errors. */
export async function runJson(
  engine: WorkflowEngine,
  stepId: string,
  inp: StepInput = input(),
): Promise<unknown> {
  const r: StepResult = await engine.runStep(stepId, inp);
  if (r.errored) throw new Error(`step ${stepId} errored: ${r.errors.join('; ')}`);
  return JSON.parse(r.body as string) as unknown;
}
