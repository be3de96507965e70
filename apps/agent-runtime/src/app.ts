import type { Server } from 'node:http';
import type { LookupFunction } from '@org/host-policy';
import type { Bootstrap } from '@org/workflow-compiler';
import type { Config } from './startup/config.js';
import { verifyDeployments, type VerifiedDeployment } from './startup/deployments.js';
import { createWorkflowEngine, Redactor } from '@org/workflow-engine';
import { closePersistence, planPersistence, type PersistencePlan } from './startup/persistence.js';
import type { WorkflowEngine } from '@org/workflow-engine';
import { createEngineHost } from './runtime/engine-host.js';
import { httpRoutes, type TriggerRoute } from './runtime/http/routes.js';
import { HttpRunCounters, type HttpStepCounters } from './runtime/http/http-runs.js';
import { RunTracker } from './runtime/http/run-tracker.js';
import { createTriggerServer } from './runtime/http/server.js';
import { createOutput, type LineSink, type Output } from './runtime/output.js';
import { createStringDecryptor, registerRecordSecrets, type StringDecryptor } from './runtime/secrets.js';
import { createTimedTriggers, type DeploymentStepCounters, type TimedDeployment } from './runtime/timers.js';
import { DELIBERATE_DIFFERENCES, unsupportedUses } from './startup/start-up-report.js';

/** One step's run counters (`Agent.stepCounters()`, the `step counters` lines at shutdown). */
export interface StepRunCounters extends DeploymentStepCounters {
  /** How many of `runs` an HTTP trigger started. */
  readonly httpRuns: number;
}

/** Everything the agent needs; `main.ts` fills it from the environment, tests directly. */
export interface AppDeps {
  readonly bootstrap: Bootstrap;
  readonly config: Omit<Config, 'bootstrap' | 'bootstrapSecretKey'>;
  /** Where JSON log and metric lines go (stdout in production). */
  readonly sink: LineSink;
  /** Directory relative `remoteConfiguration` paths resolve against (default: the working directory). */
  readonly baseDir?: string | undefined;
  /** Port overrides by server id or `<deploymentId>/<serverId>` (tests use 0). */
  readonly ports?: Readonly<Record<string, number>> | undefined;
  /** DNS lookup for outbound calls (tests). */
  readonly lookup?: LookupFunction | undefined;
  /** Values that came from the secrets file into the bootstrap (ADR 0059): registered with the redactor. */
  readonly secrets?: readonly string[] | undefined;
  /** The engines' clock (`getTimestamp`, authentication property expiry); default `Date.now`. Tests move it. */
  readonly now?: (() => number) | undefined;
}

/** One trigger server (created, not listening). */
export interface ServerSpec {
  readonly deploymentId: string;
  readonly id: string;
  readonly port: number;
  readonly bindAddress: string;
  readonly server: Server;
}

/** A started-up agent: verified deployments, engines and servers. `main.ts` listens; tests too. */
export interface Agent {
  readonly servers: readonly ServerSpec[];
  readonly engines: ReadonlyMap<string, WorkflowEngine>;
  readonly output: Output;
  /** The only `-2/` decryption path; `calls` proves lazy decryption (S49). */
  readonly decryptor: StringDecryptor;
  readonly tracker: RunTracker;
  /**
   * Starts `runOnce` and `timer` triggers (after the servers listen). From here the agent keeps the process
   * alive until {@link Agent.stop}, with or without listeners (a timer-only deployment runs until SIGTERM).
   */
  startTriggers(): void;
  /**
   * Counters of every step that ran or is scheduled: runs (scheduled and HTTP), errors, skipped ticks, runs in
   * flight, and how many of the runs an HTTP trigger started.
   */
  stepCounters(): StepRunCounters[];
  /**
   * Stops timers, logs the step counters, waits up to `drainMs` for in-flight runs, disposes the engines.
   * Servers are the caller's.
   */
  stop(drainMs: number): Promise<boolean>;
}

interface Shared {
  readonly deps: AppDeps;
  readonly redactor: Redactor;
  readonly output: Output;
  readonly decryptor: StringDecryptor;
  readonly tracker: RunTracker;
  readonly httpRuns: HttpRunCounters;
}

/**
 * One counter line per step: the scheduler's (runs, errors, skipped ticks, in flight) plus the runs its HTTP
 * triggers started (`httpRuns`). A step with only an HTTP trigger has zero skipped ticks.
 */
function mergeCounters(
  scheduled: readonly DeploymentStepCounters[],
  http: readonly HttpStepCounters[],
): StepRunCounters[] {
  const out = new Map<string, StepRunCounters>();
  for (const c of scheduled) out.set(`${c.deploymentId}\u0000${c.stepId}`, { ...c, httpRuns: 0 });
  for (const h of http) {
    const key = `${h.deploymentId}\u0000${h.stepId}`;
    const c = out.get(key) ?? {
      deploymentId: h.deploymentId,
      stepId: h.stepId,
      runs: 0,
      errors: 0,
      skippedTicks: 0,
      running: 0,
      httpRuns: 0,
    };
    out.set(key, {
      ...c,
      runs: c.runs + h.runs,
      errors: c.errors + h.errors,
      running: c.running + h.running,
      httpRuns: h.runs,
    });
  }
  return [...out.values()];
}

/** On failure every store opened so far is closed (the agent does not start). */
async function startEngine(s: Shared, d: VerifiedDeployment, plan: PersistencePlan): Promise<WorkflowEngine> {
  const host = createEngineHost({
    record: d.record,
    policy: d.policy,
    decryptor: s.decryptor,
    redactor: s.redactor,
    output: s.output,
    outbound: {
      timeoutMs: s.deps.config.timeouts.outboundMs,
      maxResponseBytes: s.deps.config.limits.outboundResponseBytes,
    },
    lookup: s.deps.lookup,
    now: s.deps.now,
  });
  const persistence = plan.get(d.record.deploymentId);
  try {
    return await createWorkflowEngine(d.workflow, {
      host: { ...host, persistence },
      data: d.record.data ?? {},
      limits: { timeMs: s.deps.config.timeouts.scriptMs, splitTimeMs: s.deps.config.timeouts.splitMs },
      redactor: s.redactor,
    });
  } catch (err) {
    await closePersistence(plan);
    throw err;
  }
}

function serversOf(s: Shared, d: VerifiedDeployment, engine: WorkflowEngine): ServerSpec[] {
  const entries = d.record.allowHttpServerAccess ?? [];
  const routes = httpRoutes(d.record.deploymentId, engine.steps, engine, new Set(entries.map((e) => e.id)));
  return entries
    .filter((e) => e.inProcOnly !== true && e.inProcOnly !== 'true')
    .map((e) => {
      const ports = s.deps.ports ?? {};
      const port = ports[`${d.record.deploymentId}/${e.id}`] ?? ports[e.id] ?? e.port ?? 0;
      const list: TriggerRoute[] = routes.get(e.id) ?? [];
      const server = createTriggerServer({
        routes: list,
        limits: s.deps.config.limits,
        timeouts: s.deps.config.timeouts,
        output: s.output,
        tracker: s.tracker,
        runs: s.httpRuns,
      });
      return {
        deploymentId: d.record.deploymentId,
        id: e.id,
        port,
        bindAddress: e.bindAddress ?? '127.0.0.1',
        server,
      };
    });
}

/**
 * Builds the agent from a validated bootstrap: registers every secret with the redactor, verifies every
 * record's package (nothing runs unless all pass), creates one engine per deployment and one server per
 * `allowHttpServerAccess` entry. No listen(), no process.env (house style §1).
 * @throws coded errors from verification (`POLICY_*`, `CRYPTO_*`, `FORMAT_*`, `WORKFLOW_*`, `AGENT_*`).
 */
export async function createApp(deps: AppDeps): Promise<Agent> {
  const redactor = new Redactor();
  for (const record of deps.bootstrap) registerRecordSecrets(record, redactor);
  for (const secret of deps.secrets ?? []) redactor.add(secret);
  const s: Shared = {
    deps,
    redactor,
    output: createOutput(deps.sink, redactor, undefined, deps.config.logLevel ?? 'info'),
    decryptor: createStringDecryptor(deps.config.stringSecretKeys),
    tracker: new RunTracker(),
    httpRuns: new HttpRunCounters(),
  };
  const verified = await verifyDeployments(deps.bootstrap, {
    allowUnpackaged: deps.config.allowUnpackaged,
    maxPackageBytes: deps.config.limits.maxPackageBytes,
    baseDir: deps.baseDir ?? process.cwd(),
    allowPrivateNetworkHosts: deps.config.allowPrivateNetworkHosts,
  });
  const persistence = planPersistence(verified, deps.config.dataDir);
  const engines = new Map<string, WorkflowEngine>();
  const servers: ServerSpec[] = [];
  const timed: TimedDeployment[] = [];
  s.output.info('deliberate differences from the reference agent', { differences: DELIBERATE_DIFFERENCES });
  for (const d of verified) {
    const engine = await startEngine(s, d, persistence);
    engines.set(d.record.deploymentId, engine);
    timed.push({ deploymentId: d.record.deploymentId, engine, record: d.record });
    servers.push(...serversOf(s, d, engine));
    // One line per unsupported feature, at start-up, never first at run time (README "Start-up warnings").
    for (const use of unsupportedUses(d.record, d.workflow, engine)) {
      s.output.warn('unsupported feature', { deploymentId: d.record.deploymentId, ...use });
    }
    s.output.info('deployment loaded', {
      deploymentId: d.record.deploymentId,
      source: d.source,
      steps: engine.steps.length,
    });
  }
  const scheduling = createTimedTriggers(timed, s.tracker, s.output);
  let keepAlive: NodeJS.Timeout | undefined;
  let state: 'created' | 'started' | 'stopped' = 'created';
  return {
    servers,
    engines,
    output: s.output,
    decryptor: s.decryptor,
    tracker: s.tracker,
    startTriggers() {
      if (state !== 'created') return;
      state = 'started';
      // An agent is a service: it runs until stopped even when no listener or timer holds the event loop.
      keepAlive = setInterval(() => undefined, 2 ** 31 - 1);
      scheduling.start();
    },
    stepCounters: () => mergeCounters(scheduling.counters(), s.httpRuns.counters()),
    async stop(drainMs) {
      const started = state === 'started';
      state = 'stopped';
      scheduling.stop();
      clearInterval(keepAlive);
      const idle = await s.tracker.idle(drainMs);
      if (started)
        for (const c of mergeCounters(scheduling.counters(), s.httpRuns.counters()))
          s.output.info('step counters', { ...c });
      for (const engine of engines.values()) engine.dispose();
      await closePersistence(persistence);
      return idle;
    },
  };
}
