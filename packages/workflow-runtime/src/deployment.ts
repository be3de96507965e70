import { compileHostPolicy, type HostEntry, type HostPolicy } from '@org/host-policy';
import type { DeploymentRecord } from '@org/workflow-compiler';

/** A record whose workflow passed every deploy-time check, with its outbound policy. */
export interface VerifiedDeployment {
  readonly record: DeploymentRecord;
  readonly workflow: unknown;
  readonly policy: HostPolicy;
  /** Where the workflow came from: a verified package, an unpackaged file (opt-in), or a workflow test. */
  readonly source: 'package' | 'unpackaged' | 'test';
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
