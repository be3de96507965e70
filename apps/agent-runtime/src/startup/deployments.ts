import { compileHostPolicy, type HostEntry, type HostPolicy } from '@org/host-policy';
import type { Bootstrap, DeploymentRecord } from '@org/workflow-compiler';
import { isCodedError, withContext } from '../errors.js';
import { loadWorkflow, type LoadWorkflowOptions } from './package-loader.js';

/** A record whose workflow passed every deploy-time check, with its outbound policy. */
export interface VerifiedDeployment {
  readonly record: DeploymentRecord;
  readonly workflow: unknown;
  readonly policy: HostPolicy;
  readonly source: 'package' | 'unpackaged';
}

function isDisabled(record: DeploymentRecord): boolean {
  return record.enabled === false || record.enabled === 'false';
}

/** One host policy per record; the private-network opt-in applies to the ids this record declares. */
export function hostPolicyOf(
  record: DeploymentRecord,
  allowPrivateNetworkHosts: readonly string[],
): HostPolicy {
  const hosts = (record.allowExternalHostAccess ?? []) as unknown as HostEntry[];
  const declared = new Set(hosts.map((h) => h.id));
  return compileHostPolicy(hosts, {
    allowPrivateNetwork: allowPrivateNetworkHosts.filter((id) => declared.has(id)),
  });
}

/**
 * Verifies every enabled record before any of them runs (S85): a refusal in one record stops start-up
 * with nothing installed. Records are independent otherwise and run side by side.
 */
export async function verifyDeployments(
  bootstrap: Bootstrap,
  options: LoadWorkflowOptions & { readonly allowPrivateNetworkHosts: readonly string[] },
): Promise<VerifiedDeployment[]> {
  const out: VerifiedDeployment[] = [];
  for (const record of bootstrap) {
    if (isDisabled(record)) continue;
    let policy: HostPolicy;
    try {
      policy = hostPolicyOf(record, options.allowPrivateNetworkHosts);
    } catch (err) {
      if (isCodedError(err)) throw withContext(err, `deployment "${record.deploymentId}"`);
      throw err;
    }
    const { workflow, source } = await loadWorkflow(record, options);
    out.push({ record, workflow, policy, source });
  }
  return out;
}
