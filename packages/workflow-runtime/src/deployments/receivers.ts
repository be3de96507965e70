import type { StepRef, WorkflowEngine } from '@org/workflow-engine';
import { AgentError } from '../errors.js';
import type { Grants } from './grants.js';

/** A step with a `deploymentAccess` trigger. */
export interface Receiver {
  readonly ref: StepRef;
  /** The trigger's `ids`: receive entries of the step's record. */
  readonly ids: readonly string[];
  readonly noTrace: boolean;
}

const quote = (s: string) => JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
const isTrue = (v: unknown) => v === true || v === 'true';

/**
 * The steps of one deployment that other deployments may call, by stepId (ADR 0060: several workflows may use
 * one id).
 * @throws {@link AgentError} `AGENT_TRIGGER_INVALID` for a trigger id that is not a `receive` entry of the record.
 */
export function receiversOf(
  deploymentId: string,
  engine: WorkflowEngine,
  grants: Grants,
): Map<string, Receiver[]> {
  const out = new Map<string, Receiver[]>();
  for (const step of engine.steps) {
    const t = (step.trigger as { deploymentAccess?: { ids?: unknown; noTrace?: unknown } } | undefined)
      ?.deploymentAccess;
    if (t === undefined) continue;
    const ids = Array.isArray(t.ids) ? t.ids.filter((x): x is string => typeof x === 'string') : [];
    for (const id of ids) {
      if (!grants.receive.has(id))
        throw new AgentError(
          'AGENT_TRIGGER_INVALID',
          `deployment "${deploymentId}", step "${step.stepId}": deploymentAccess id ${quote(id)} is not a receive entry of allowDeploymentAccess`,
        );
    }
    const list = out.get(step.stepId) ?? [];
    list.push({
      ref: { stepId: step.stepId, workflowIndex: step.workflowIndex },
      ids,
      noTrace: isTrue(t.noTrace),
    });
    out.set(step.stepId, list);
  }
  return out;
}
