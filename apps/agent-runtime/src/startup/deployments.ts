import type { HostPolicy } from '@org/host-policy';
import { checkFreshness } from '@org/oapp-format';
import type { Bootstrap, DeploymentRecord } from '@org/workflow-compiler';
import { hostPolicyOf, isCodedError, type VerifiedDeployment } from '@org/workflow-runtime';
import { withContext } from '@org/workflow-runtime/internal';
import { loadWorkflow, type AcceptedRelease, type LoadWorkflowOptions } from './package-loader.js';
import type { RememberedRelease, ReleaseStore } from './release-store.js';

function isDisabled(record: DeploymentRecord): boolean {
  return record.enabled === false || record.enabled === 'false';
}

/** One deployment's accepted package release (for the start-up report). */
export interface DeploymentRelease {
  readonly deploymentId: string;
  readonly release: AcceptedRelease;
  /** What the agent remembers for the package id once start-up goes on (undefined: nothing, e.g. v1 or no data directory). */
  readonly remembered: RememberedRelease | undefined;
}

/** The verified deployments and the releases of those that came from packages. */
export interface VerifiedDeployments {
  readonly deployments: VerifiedDeployment[];
  /** Each packaged deployment's release, with what will be remembered for its package id. */
  readonly releases: DeploymentRelease[];
  /**
   * Writes the newest release of each package id durably (ADR 0144). The caller calls it once everything else
   * about start-up succeeded and before anything listens, so a refused start-up leaves the data directory as it was.
   * @throws {@link AgentError} `AGENT_RELEASE_STATE_UNWRITABLE`.
   */
  rememberReleases(): void;
}

/** The highest release (v2) among deployments of one package id, or undefined when all are v1. */
function highest(group: readonly DeploymentRelease[]): DeploymentRelease | undefined {
  let best: DeploymentRelease | undefined;
  for (const d of group) {
    const seq = d.release.sequence;
    if (seq !== null && (best === undefined || seq > (best.release.sequence ?? -1))) best = d;
  }
  return best;
}

/**
 * With a data directory, deployments of one package id in one bootstrap must run one release (ADR 0144): each is
 * checked against the highest of them as if that were remembered, so the result does not depend on the records'
 * order and the next start does not refuse what this one accepted.
 */
function checkWithinBootstrap(releases: readonly DeploymentRelease[]): void {
  const byPackage = new Map<string, DeploymentRelease[]>();
  for (const r of releases)
    byPackage.set(r.release.packageId, [...(byPackage.get(r.release.packageId) ?? []), r]);
  for (const group of byPackage.values()) {
    const top = highest(group);
    if (group.length < 2 || top === undefined) continue;
    for (const d of group) {
      if (d === top) continue;
      try {
        checkFreshness(d.release, d.release.contentSha256, d.release.minimumSequence, {
          newest: { sequence: top.release.sequence!, contentSha256: top.release.contentSha256 },
          now: new Date(0), // expiry was checked when the package opened
          allowSequence: d.release.allowDowngradeTo,
        });
      } catch (err) {
        if (isCodedError(err))
          throw withContext(
            err,
            `deployment "${d.deploymentId}" (deployment "${top.deploymentId}" runs the same package id)`,
          );
        throw err;
      }
    }
  }
}

/**
 * Verifies every enabled record before any of them runs (S85): a refusal in one record stops start-up
 * with nothing installed. Records are independent otherwise and run side by side. The newest accepted release of
 * each package id is remembered (`options.releases`, ADR 0144) only when the caller calls `rememberReleases`.
 * @throws what {@link loadWorkflow} throws; `POLICY_ROLLBACK` / `POLICY_SEQUENCE_REUSED` for two records of one
 *   package id running different releases.
 */
export async function verifyDeployments(
  bootstrap: Bootstrap,
  options: LoadWorkflowOptions & { readonly allowPrivateNetworkHosts: readonly string[] },
): Promise<VerifiedDeployments> {
  const out: VerifiedDeployment[] = [];
  const accepted: DeploymentRelease[] = [];
  for (const record of bootstrap) {
    if (isDisabled(record)) continue;
    let policy: HostPolicy;
    try {
      policy = hostPolicyOf(record, options.allowPrivateNetworkHosts);
    } catch (err) {
      if (isCodedError(err)) throw withContext(err, `deployment "${record.deploymentId}"`);
      throw err;
    }
    const { workflow, source, release } = await loadWorkflow(record, options);
    out.push({ record, workflow, policy, source });
    if (release !== undefined)
      accepted.push({ deploymentId: record.deploymentId, release, remembered: release.newestBefore });
  }
  // Without a data directory nothing is remembered across starts, so records of one package id may differ.
  if (options.releases?.dir !== undefined) checkWithinBootstrap(accepted);
  const plan = planRemembered(accepted, options.releases);
  return {
    deployments: out,
    releases: accepted.map((d) => ({ ...d, remembered: plan.get(d.release.packageId)?.kept })),
    rememberReleases() {
      for (const [packageId, p] of plan)
        if (p.write !== undefined)
          options.releases!.remember(packageId, p.write.release, p.write.deploymentId);
    },
  };
}

interface PlannedRelease {
  /** What is remembered for the package id once start-up goes on. */
  readonly kept: RememberedRelease | undefined;
  /** The release to write, when it differs from what is remembered. */
  readonly write: { readonly release: RememberedRelease; readonly deploymentId: string } | undefined;
}

/**
 * Per package id, the highest release this start accepted: newer than the remembered one, or the operator's
 * allowed downgrade (which then becomes the remembered newest). Nothing without a data directory or for v1.
 */
function planRemembered(
  accepted: readonly DeploymentRelease[],
  store: ReleaseStore | undefined,
): Map<string, PlannedRelease> {
  const plan = new Map<string, PlannedRelease>();
  for (const d of accepted) {
    const id = d.release.packageId;
    if (plan.has(id)) continue;
    const top = highest(accepted.filter((x) => x.release.packageId === id));
    const before = d.release.newestBefore;
    if (top === undefined || store?.dir === undefined) {
      plan.set(id, { kept: before, write: undefined });
      continue;
    }
    const next = { sequence: top.release.sequence!, contentSha256: top.release.contentSha256 };
    const same = before?.sequence === next.sequence && before.contentSha256 === next.contentSha256;
    plan.set(id, { kept: next, write: same ? undefined : { release: next, deploymentId: top.deploymentId } });
  }
  return plan;
}
