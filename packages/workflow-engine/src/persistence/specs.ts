import { loadWorkflow } from '../workflow-model.js';
import type { PersistenceSpec } from './types.js';

/**
 * The persistence settings of every enabled step of a compiled workflow file, for start-up checks before any
 * store is opened (paths, shared files, keys).
 * @throws EngineError `ENGINE_INVALID_WORKFLOW` when the value is not a compiled workflow file.
 */
export function persistenceSpecs(compiledWorkflow: unknown): { stepId: string; spec: PersistenceSpec }[] {
  const out: { stepId: string; spec: PersistenceSpec }[] = [];
  for (const m of loadWorkflow(compiledWorkflow, {}).values())
    if (m.persistence) out.push({ stepId: m.stepId, spec: m.persistence });
  return out;
}
