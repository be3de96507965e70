import {
  checkPersistenceSpec,
  createLmdbPersistence,
  persistenceSpecs,
  storePathOf,
  type PersistenceProvider,
} from '@org/workflow-engine';
import { encodeUtf8, hkdfSha256 } from '@org/envelope-crypto';
import { AgentError } from './errors.js';
import type { VerifiedDeployment } from './deployment.js';

/** The persistence of one deployment: its provider, or undefined when no step persists anything. */
export type PersistencePlan = ReadonlyMap<string, PersistenceProvider | undefined>;

/**
 * Checks every step store of every deployment before anything is created (S126, S129): paths resolve under
 * `dataDir` and the record's `persistenceRoot` (no absolute path, no `..`, no symlink out), keys are strict hex,
 * and no persistence file is named by two deployments (steps of one deployment may share a file). Then makes
 * one provider per deployment that needs one; nothing is opened until the engines load.
 * @throws EngineError `ENGINE_PERSISTENCE_INVALID` naming deployment and step; {@link AgentError}
 *   `AGENT_PERSISTENCE_CONFLICT` for a file two deployments name, or persistence without a data directory.
 */
export function planPersistence(
  deployments: readonly VerifiedDeployment[],
  dataDir: string | undefined,
  authStoreSecret?: Uint8Array,
): PersistencePlan {
  const owners = new Map<string, string>();
  const plan = new Map<string, PersistenceProvider | undefined>();
  for (const d of deployments) {
    const id = d.record.deploymentId;
    const specs = persistenceSpecs(d.workflow);
    if (specs.length === 0) {
      plan.set(id, undefined);
      continue;
    }
    if (dataDir === undefined)
      throw new AgentError(
        'AGENT_PERSISTENCE_CONFLICT',
        `deployment "${id}" has persistence but no data directory is set`,
      );
    const root = d.record.persistenceRoot;
    for (const { stepId, spec } of specs) {
      const where = `deployment "${id}" step ${JSON.stringify(stepId.slice(0, 200))}`;
      checkPersistenceSpec(spec, where);
      const path = storePathOf(dataDir, root, spec.file, where);
      const owner = owners.get(path);
      if (owner !== undefined && owner !== id)
        throw new AgentError(
          'AGENT_PERSISTENCE_CONFLICT',
          `${where}: persistence file "${spec.file}" is also used by deployment "${owner}"`,
        );
      owners.set(path, id);
    }
    const authKey = authStoreSecret === undefined ? undefined : deploymentAuthKey(authStoreSecret, id);
    plan.set(id, createLmdbPersistence({ dataDir, root, label: `deployment "${id}"`, authKey }));
  }
  return plan;
}

/**
 * The key for values a deployment's authentication contexts persist (ADR 0130): HKDF-SHA-256 of the agent's secret,
 * salted with the deployment id, so no two deployments share one.
 */
export function deploymentAuthKey(secret: Uint8Array, deploymentId: string): Uint8Array {
  return hkdfSha256(secret, encodeUtf8(deploymentId), encodeUtf8('agent authentication persistence'), 32);
}

/** Closes every provider of the plan (waits for their pending writes). */
export async function closePersistence(plan: PersistencePlan): Promise<void> {
  const providers = [...plan.values()].filter((p): p is PersistenceProvider => p !== undefined);
  await Promise.all(providers.map((p) => p.close()));
}
