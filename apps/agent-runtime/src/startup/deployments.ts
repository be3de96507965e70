import type { HostPolicy } from '@org/host-policy';
import type { Bootstrap, DeploymentRecord } from '@org/workflow-compiler';
import { hostPolicyOf, isCodedError, type VerifiedDeployment } from '@org/workflow-runtime';
import { withContext } from '@org/workflow-runtime/internal';
import { loadWorkflow, type LoadWorkflowOptions } from './package-loader.js';

function isDisabled(record: DeploymentRecord): boolean {
  return record.enabled === false || record.enabled === 'false';
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
