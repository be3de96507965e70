import type { StepRef, WorkflowEngine } from '@org/workflow-engine';
import { isCodedError } from '../errors.js';
import type { RunTracker } from './http/run-tracker.js';
import type { Output } from './output.js';

/** One deployment's engine, for timed triggers. */
export interface TimedDeployment {
  readonly deploymentId: string;
  readonly engine: WorkflowEngine;
}

interface TimedTrigger {
  runOnce?: unknown;
  runOnceNoTrace?: unknown;
  timer?: { period?: number; delay?: number };
}

const EMPTY_INPUT = () => ({ body: undefined, stream: undefined, headers: {}, properties: {} });

function isTrue(v: unknown): boolean {
  return v === true || v === 'true';
}

const SUPPORTED_TRIGGERS = new Set(['http', 'runOnce', 'runOnceNoTrace', 'timer']);

/** Trigger kinds this agent does not run (`fileWatcher`, `tcp`, `deploymentAccess`), per step, for a warning. */
export function unsupportedTriggers(deployment: TimedDeployment): { stepId: string; kind: string }[] {
  const out: { stepId: string; kind: string }[] = [];
  for (const step of deployment.engine.steps) {
    if (typeof step.trigger !== 'object' || step.trigger === null) continue;
    for (const kind of Object.keys(step.trigger)) {
      if (!SUPPORTED_TRIGGERS.has(kind) && kind !== 'comment') out.push({ stepId: step.stepId, kind });
    }
  }
  return out;
}

/**
 * Starts `runOnce` (once, right after start) and `timer` triggers (`delay`, then every `period` ms) of every
 * deployment. Timers are unref'd; the returned function clears them all (shutdown).
 */
export function startTimedTriggers(
  deployments: readonly TimedDeployment[],
  tracker: RunTracker,
  output: Output,
): () => void {
  const handles: NodeJS.Timeout[] = [];
  for (const d of deployments) {
    for (const step of d.engine.steps) {
      const t = (step.trigger ?? {}) as TimedTrigger;
      const fire = () => void runTimed(d, step, tracker, output);
      if (isTrue(t.runOnce) || isTrue(t.runOnceNoTrace)) handles.push(setTimeout(fire, 0));
      const period = t.timer?.period;
      if (typeof period === 'number' && period > 0) {
        const first = setTimeout(() => {
          fire();
          handles.push(setInterval(fire, period).unref());
        }, t.timer?.delay ?? period);
        handles.push(first.unref());
      }
    }
  }
  return () => handles.splice(0).forEach((h) => clearTimeout(h));
}

async function runTimed(
  d: TimedDeployment,
  step: StepRef,
  tracker: RunTracker,
  output: Output,
): Promise<void> {
  const stepId = step.stepId;
  try {
    // The step itself, not the first with its id (ADR 0060).
    const result = await tracker.track(() => d.engine.runStep(step, EMPTY_INPUT()));
    if (result.errored)
      output.warn('step errored', { deploymentId: d.deploymentId, stepId, errors: result.errors.join('; ') });
  } catch (err) {
    output.error('step run failed', {
      deploymentId: d.deploymentId,
      stepId,
      code: isCodedError(err) ? err.code : 'INTERNAL',
    });
  }
}
