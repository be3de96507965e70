import type { LookupFunction } from '@org/host-policy';
import { createPackagerCapability } from '@org/packager';
import type { Bootstrap } from '@org/workflow-compiler';
import { Redactor } from '@org/workflow-engine';
import {
  createOutput,
  createRuntime,
  createStringDecryptor,
  registerRecordSecrets,
  type LineSink,
  type Output,
  type PackagerCapability,
  type Runtime,
  type RuntimeMetrics,
} from '@org/workflow-runtime';
import { DELIBERATE_DIFFERENCES } from '@org/workflow-runtime/internal';
import type { Config } from './startup/config.js';
import { verifyDeployments } from './startup/deployments.js';

export type { ServerSpec, StepRunCounters } from '@org/workflow-runtime';

/** Everything the agent needs; `main.ts` fills it from the environment, tests directly. */
export interface AppDeps {
  readonly bootstrap: Bootstrap;
  readonly config: Omit<Config, 'bootstrap' | 'bootstrapSecretKey'>;
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
  /** The engines' clock (`getTimestamp`, authentication property expiry); default `Date.now`. Tests move it. */
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

/** A started-up agent: verified deployments running on `@org/workflow-runtime`. `main.ts` listens; tests too. */
export type Agent = Runtime;

/**
 * Builds the agent from a validated bootstrap: registers every secret with the redactor, verifies every
 * record's package (nothing runs unless all pass), then hands the verified deployments to the runtime (one
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
  const deployments = await verifyDeployments(deps.bootstrap, {
    allowUnpackaged: deps.config.allowUnpackaged,
    maxPackageBytes: deps.config.limits.maxPackageBytes,
    baseDir: deps.baseDir ?? process.cwd(),
    allowPrivateNetworkHosts: deps.config.allowPrivateNetworkHosts,
  });
  reportDeliberateDifferences(output);
  return createRuntime({
    deployments,
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
    packager: deps.packager ?? createPackagerCapability(),
    // Relative allowFileAccess paths start where relative remoteConfiguration paths do.
    fileBaseDir: deps.baseDir ?? process.cwd(),
  });
}
