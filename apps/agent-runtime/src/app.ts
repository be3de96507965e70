import type { LookupFunction } from '@org/host-policy';
import type { Bootstrap } from '@org/workflow-compiler';
import { Redactor } from '@org/workflow-engine';
import {
  createOutput,
  createRuntime,
  createStringDecryptor,
  packagerGranted,
  registerRecordSecrets,
  type LineSink,
  type Output,
  type PackagerCapability,
  type Runtime,
  type RuntimeMetrics,
} from '@org/workflow-runtime';
import { DELIBERATE_DIFFERENCES } from '@org/workflow-runtime/internal';
import { rememberBootstrapRelease } from './startup/bootstrap-release.js';
import { bootstrapReport, type BootstrapForm, type BootstrapTrust } from './startup/bootstrap-source.js';
import type { Config } from './startup/config.js';
import { verifyDeployments, type DeploymentRelease } from './startup/deployments.js';
import { releaseStore } from './startup/release-store.js';

export type { ServerSpec, StepRunCounters } from '@org/workflow-runtime';

/** Everything the agent needs; `main.ts` fills it from the environment, tests directly. */
export interface AppDeps {
  readonly bootstrap: Bootstrap;
  readonly config: Omit<Config, 'bootstrap' | 'bootstrapSecretKey'>;
  /** How the bootstrap was given and whether its signature was checked (`loadBootstrap`): the start-up report. */
  readonly bootstrapForm?: BootstrapForm | undefined;
  readonly bootstrapTrust?: BootstrapTrust | undefined;
  /** Where JSON log and metric lines go (stdout in production). */
  readonly sink: LineSink;
  /**
   * Directory relative `remoteConfiguration` and `allowFileAccess` paths resolve against (default: the working
   * directory).
   */
  readonly baseDir?: string | undefined;
  /** Port overrides by server id or `<deploymentId>/<serverId>` (tests use 0). */
  readonly ports?: Readonly<Record<string, number>> | undefined;
  /** DNS lookup for outbound calls (tests). */
  readonly lookup?: LookupFunction | undefined;
  /** Values that came from the secrets file into the bootstrap (ADR 0059): registered with the redactor. */
  readonly secrets?: readonly string[] | undefined;
  /**
   * The engines' clock (`getTimestamp`, authentication property expiry) and the one packages' `expiresAt` is
   * compared with at start-up; default `Date.now`. Tests move it.
   */
  readonly now?: (() => number) | undefined;
  /** Where request, step-run and outbound-call events go (main.ts: the admin listener's registry). */
  readonly metrics?: RuntimeMetrics | undefined;
  /**
   * The packager capability deployments with `allowPackagerAccess` are granted (ADR 0136); default
   * `@org/packager`'s `createPackagerCapability()` with the packager's default limits.
   */
  readonly packager?: PackagerCapability | undefined;
}

/** Where the deliberate differences are described (the start-up line points there). */
const DELIBERATE_DIFFERENCES_DOC = 'apps/agent-runtime/README.md';

/**
 * The deliberate differences from the reference agent: one short `info` line with their count and where they are
 * described, and the list itself at `debug` (issue 27: the list made a line of about 700 characters at every start).
 */
function reportDeliberateDifferences(output: Output): void {
  const count = DELIBERATE_DIFFERENCES.length;
  output.info(
    `${count} deliberate differences from the reference agent; see ${DELIBERATE_DIFFERENCES_DOC} (debug level lists them)`,
  );
  output.debug('deliberate differences from the reference agent', { differences: DELIBERATE_DIFFERENCES });
}

/**
 * The bootstrap's signature state (issue 29 §2): `verified` with the administrators who signed, the release fields
 * and the rollback verdict (ADR 0147); `unsigned` or `signed, not checked` when no administrator keys are set.
 */
function reportBootstrap(output: Output, form: BootstrapForm | undefined, trust: BootstrapTrust): void {
  const { line, warning } = bootstrapReport(form, trust);
  if (warning !== undefined) output.warn(warning.msg, warning.fields);
  output.info(line.msg, line.fields);
}

/** What rollback is checked against for one package id: the floor and the remembered newest, or the floor only. */
function rollbackState(d: DeploymentRelease, dataDir: string | undefined): string {
  const floor = d.release.minimumSequence;
  const floorText = floor === undefined ? 'no floor set' : `floor ${floor}`;
  if (dataDir === undefined) return `no data directory: floor only (${floorText})`;
  const remembered = d.remembered === undefined ? 'none' : String(d.remembered.sequence);
  return `${floorText}, remembered newest ${remembered}`;
}

/**
 * One line per packaged deployment (issue 29 §1): its release (format version, sequence, times), the verdict, and
 * the rollback state; a deliberate downgrade (`packaging.allowDowngradeTo`) is a warning as well.
 */
function reportReleases(
  output: Output,
  releases: readonly DeploymentRelease[],
  dataDir: string | undefined,
): void {
  for (const d of releases) {
    const r = d.release;
    if (r.verdict === 'allowed-downgrade')
      output.warn('deliberate downgrade', {
        deploymentId: d.deploymentId,
        packageId: r.packageId,
        sequence: r.sequence ?? undefined,
        newestBefore: r.newestBefore?.sequence,
        detail: `packaging.allowDowngradeTo accepts sequence ${r.sequence} although sequence ${r.newestBefore?.sequence ?? '?'} was accepted before; it is now the remembered newest (remove allowDowngradeTo once done)`,
      });
    output.info('package release', {
      deploymentId: d.deploymentId,
      packageId: r.packageId,
      formatVersion: r.formatVersion,
      sequence: r.sequence ?? 'none (format v1)',
      createdAt: r.createdAt,
      expiresAt: r.expiresAt ?? 'none',
      verdict: r.verdict,
      ...(r.allowDowngradeTo === undefined ? {} : { allowDowngradeTo: r.allowDowngradeTo }),
      rollback: rollbackState(d, dataDir),
    });
  }
}

/**
 * `@org/packager`'s capability with its default limits when a deployment is granted it (ADR 0136), else none: the
 * runtime hands the capability to granted deployments only, and importing the packager (Express, its body schemas)
 * cost every agent start a quarter of a second (issue 31).
 */
async function packagerFor(
  deployments: readonly { readonly record: Bootstrap[number] }[],
): Promise<PackagerCapability | undefined> {
  if (!deployments.some((d) => packagerGranted(d.record))) return undefined;
  return (await import('@org/packager')).createPackagerCapability();
}

/** A started-up agent: verified deployments running on `@org/workflow-runtime`. `main.ts` listens; tests too. */
export type Agent = Runtime;

/**
 * Builds the agent from a validated bootstrap: registers every secret with the redactor, verifies every
 * record's package (nothing runs unless all pass), remembers the newest accepted release of each package id in the
 * data directory (durably, before anything serves: ADR 0144), then hands the verified deployments to the runtime (one
 * engine per deployment, one server per `allowHttpServerAccess` entry). No listen(), no process.env (house
 * style §1).
 * @throws coded errors from verification (`POLICY_*`, `CRYPTO_*`, `FORMAT_*`, `WORKFLOW_*`, `AGENT_*`).
 */
export async function createApp(deps: AppDeps): Promise<Agent> {
  const redactor = new Redactor();
  for (const record of deps.bootstrap) registerRecordSecrets(record, redactor);
  for (const secret of deps.secrets ?? []) redactor.add(secret);
  const output = createOutput(deps.sink, redactor, undefined, deps.config.logLevel ?? 'info');
  const decryptor = createStringDecryptor(deps.config.stringSecretKeys);
  if (deps.bootstrapTrust !== undefined) reportBootstrap(output, deps.bootstrapForm, deps.bootstrapTrust);
  const releases = releaseStore(deps.config.dataDir);
  const verified = await verifyDeployments(deps.bootstrap, {
    allowUnpackaged: deps.config.allowUnpackaged,
    maxPackageBytes: deps.config.limits.maxPackageBytes,
    baseDir: deps.baseDir ?? process.cwd(),
    allowPrivateNetworkHosts: deps.config.allowPrivateNetworkHosts,
    releases,
    now: deps.now,
  });
  reportDeliberateDifferences(output);
  const runtime = await createRuntime({
    deployments: verified.deployments,
    redactor,
    output,
    decryptor,
    limits: deps.config.limits,
    timeouts: deps.config.timeouts,
    dataDir: deps.config.dataDir,
    // ADR 0130: what authentication contexts persist is sealed with a key derived from the first string key.
    authStoreSecret: deps.config.stringSecretKeys[0]?.recipientSecretKey,
    tcp: deps.config.tcp,
    ports: deps.ports,
    lookup: deps.lookup,
    now: deps.now,
    metrics: deps.metrics,
    packager: deps.packager ?? (await packagerFor(verified.deployments)),
    // Relative allowFileAccess paths start where relative remoteConfiguration paths do.
    fileBaseDir: deps.baseDir ?? process.cwd(),
  });
  // ADR 0144, 0147: the newest releases and bootstrap are on disk before anything listens; a refused start-up wrote
  // nothing.
  try {
    verified.rememberReleases();
    rememberBootstrapRelease(deps.bootstrapTrust?.rollback);
  } catch (err) {
    await runtime.stop(0);
    throw err;
  }
  reportReleases(output, verified.releases, releases.dir);
  return runtime;
}
