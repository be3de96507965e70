import type { LookupFunction } from '@org/host-policy';
import {
  createWorkflowEngine,
  listSteps,
  type Redactor,
  type StepResult,
  type WorkflowEngine,
} from '@org/workflow-engine';
import type { AssetArchive } from './assets/archive.js';
import { assetServerIds, closeArchives, openServerArchives } from './assets/server-archives.js';
import { AgentError } from './errors.js';
import type { VerifiedDeployment } from './deployment.js';
import { createEngineHost, type OutboundTransport } from './engine-host.js';
import { httpRoutes, type TriggerRoute } from './http/routes.js';
import { HttpRunCounters, type HttpStepCounters } from './http/http-runs.js';
import { RunTracker } from './http/run-tracker.js';
import { createTriggerServer } from './http/server.js';
import { scriptTimeMsOf, type Limits, type Timeouts } from './limits.js';
import type { ServerSpec } from './listen.js';
import type { Output } from './output.js';
import { NO_METRICS, type RuntimeMetrics } from './observe/metrics.js';
import { closePersistence, planPersistence, type PersistencePlan } from './persistence.js';
import { reportedRun } from './reported-run.js';
import type { StringDecryptor } from './secrets.js';
import { referenceSwitches, unsupportedUses } from './start-up-report.js';
import { createTimedTriggers, type DeploymentStepCounters, type TimedDeployment } from './timers.js';
import { compileFileAccess, type FileAccess } from './files/access.js';
import { createFileHost } from './files/file-host.js';
import { DEFAULT_FILE_LIMITS, type FileLimits } from './files/limits.js';
import type { WatchSpec } from './files/watch/file-watcher.js';
import { createFileWatchers, fileWatchSpecs } from './files/watch/triggers.js';
import { DeferredEngine } from './deployments/deferred-engine.js';
import { isDeferred, packagerGranted, startupOrder } from './deployments/grants.js';
import { DeploymentRegistry } from './deployments/registry.js';
import type { PackagerCapability } from './packager/capability.js';
import { packagerBindingOf, type PackagerBinding } from './packager/setup.js';
import { tcpLimitsOf, type TcpLimits } from './tcp/limits.js';
import { createTcpTriggerServer } from './tcp/server.js';
import { isInProcOnly, isTcpServer, tcpRoutes } from './tcp/triggers.js';

/** One step's run counters (`stepCounters()`, the `step counters` lines at shutdown). */
export interface StepRunCounters extends DeploymentStepCounters {
  /** How many of `runs` an HTTP trigger started. */
  readonly httpRuns: number;
}

/** Everything {@link createRuntime} needs: verified deployments and the process-wide parts around them. */
export interface RuntimeOptions {
  /** Deployments that passed every deploy-time check (the agent verifies packages; the test runner builds). */
  readonly deployments: readonly VerifiedDeployment[];
  /** The one redactor: every secret the caller knows is registered before this call. */
  readonly redactor: Redactor;
  readonly output: Output;
  /** The only `-2/` decryption path. */
  readonly decryptor: StringDecryptor;
  readonly limits: Limits;
  readonly timeouts: Timeouts;
  /** Where step persistence files live; without it a deployment with persistence is refused. */
  readonly dataDir?: string | undefined;
  /**
   * A secret (32 bytes or more) from which each deployment's key for values its authentication contexts persist is
   * derived (ADR 0130; the agent gives its first `AGENT_STRING_SECRETKEYS` secret key). Without it such writes need
   * the step's `hexSymmetricKey`.
   */
  readonly authStoreSecret?: Uint8Array | undefined;
  /** Port overrides by server id or `<deploymentId>/<serverId>` (tests use 0). */
  readonly ports?: Readonly<Record<string, number>> | undefined;
  /** Bind address override for every trigger server (the test runner uses 127.0.0.1). */
  readonly bindAddress?: string | undefined;
  /** DNS lookup for outbound calls (tests). */
  readonly lookup?: LookupFunction | undefined;
  /** The engines' clock (`getTimestamp`, authentication property expiry); default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Replaces the network for allowed outbound calls (the workflow test runner); the host policy still decides. */
  readonly transport?: OutboundTransport | undefined;
  /**
   * Base of relative `allowFileAccess[].directoryOrFile` paths (default: the working directory). The agent passes
   * its base directory; the test runner the test's directory.
   */
  readonly fileBaseDir?: string | undefined;
  /** When set, every `directoryOrFile` must resolve inside this directory (the test runner's test root, S155). */
  readonly fileRoot?: string | undefined;
  /** Caps of `context.files(id)` and file watchers (default `DEFAULT_FILE_LIMITS`). */
  readonly fileLimits?: Partial<FileLimits> | undefined;
  /** Bounds of `tcp` trigger servers (defaults: `DEFAULT_TCP_LIMITS`). */
  readonly tcp?: Partial<TcpLimits> | undefined;
  /** Where request, step-run and outbound-call events go (default: nowhere; the agent passes prom-client's). */
  readonly metrics?: RuntimeMetrics | undefined;
  /**
   * The packager capability (ADR 0136; the agent passes `@org/packager`'s): deployments whose record has
   * `allowPackagerAccess` serve its operations. Without it such a deployment is refused at start
   * (`AGENT_PACKAGER_UNAVAILABLE`).
   */
  readonly packager?: PackagerCapability | undefined;
}

/** Deployments running on engines: their trigger servers (not listening), schedules and counters. */
export interface Runtime {
  readonly servers: readonly ServerSpec[];
  readonly engines: ReadonlyMap<string, WorkflowEngine>;
  readonly output: Output;
  readonly decryptor: StringDecryptor;
  readonly tracker: RunTracker;
  /**
   * Starts `runOnce` and `timer` triggers (after the servers listen). From here the runtime keeps the process
   * alive until {@link Runtime.stop}, with or without listeners (a timer-only deployment runs until SIGTERM).
   */
  startTriggers(): void;
  /**
   * Starts the `fileWatcher` triggers of one step and no other trigger: the test runner's way to let a watched
   * step's files drive it (issue 28). Each begins with a check of its files, tracked like a run, so
   * `tracker.idle` waits for that check and the runs it starts. Returns how many it started: 0 when the step has
   * no `fileWatcher` trigger or the runtime has stopped. A watcher never starts twice (`startTriggers` later
   * starts the others).
   */
  startFileWatchers(deploymentId: string, stepId: string): number;
  /**
   * Makes every started file watcher check its files now, rather than at its next change event or poll (tracked
   * like a run); resolves once those checks and the runs they started are done.
   */
  checkFileWatchers(): Promise<void>;
  /**
   * Counters of every step that ran or is scheduled: runs (scheduled and HTTP), errors, skipped ticks, runs in
   * flight, and how many of the runs an HTTP trigger started.
   */
  stepCounters(): StepRunCounters[];
  /**
   * Runs one step once, now, as a `runOnce` trigger would: tracked (so {@link Runtime.stop} drains it), with
   * the same `step errored` / `step run failed` lines. Resolves with the step's result, or undefined when the
   * run failed; rejects only when the deployment or step does not exist (`AGENT_STEP_NOT_FOUND`).
   * `stepId` resolves as `sendToStep` does across the file (ADR 0060).
   */
  triggerStep(deploymentId: string, stepId: string): Promise<StepResult | undefined>;
  /**
   * Stops timers, refuses new HTTP runs (503 `AGENT_SHUTTING_DOWN`, counted in `tracker.refused`), logs the
   * step counters, waits up to `drainMs` for in-flight runs, disposes the engines and closes the stores. Servers
   * are the caller's (`closeAll`).
   */
  stop(drainMs: number): Promise<boolean>;
}

interface Shared {
  readonly options: RuntimeOptions;
  readonly httpRuns: HttpRunCounters;
  /** Runs of `fileWatcher`, `tcp` and `deploymentAccess` triggers. */
  readonly eventRuns: HttpRunCounters;
  readonly tracker: RunTracker;
  /** Packaged asset zips by deployment id, then server id (open until `stop`). */
  readonly archives: Map<string, Map<string, AssetArchive>>;
  /** The deployments as the others reach them (ADR 0079). */
  readonly registry: DeploymentRegistry;
  readonly tcp: TcpLimits;
}

/**
 * One counter line per step: the scheduler's (runs, errors, skipped ticks, in flight) plus the runs its HTTP
 * triggers started (`httpRuns`) and those of its other event triggers (`fileWatcher`, `tcp`,
 * `deploymentAccess`). A step with no timer has zero skipped ticks.
 */
function mergeCounters(
  scheduled: readonly DeploymentStepCounters[],
  http: readonly HttpStepCounters[],
  events: readonly HttpStepCounters[],
): StepRunCounters[] {
  const out = new Map<string, StepRunCounters>();
  for (const c of scheduled) out.set(`${c.deploymentId}\u0000${c.stepId}`, { ...c, httpRuns: 0 });
  const tagged = [...http.map((h) => ({ h, isHttp: true })), ...events.map((h) => ({ h, isHttp: false }))];
  for (const { h, isHttp } of tagged) {
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
      httpRuns: c.httpRuns + (isHttp ? h.runs : 0),
    });
  }
  return [...out.values()];
}

/** One engine over its host; on failure the caller closes every store opened so far (nothing starts). */
async function startEngine(
  s: Shared,
  d: VerifiedDeployment,
  plan: PersistencePlan,
  files: ReadonlyMap<string, FileAccess>,
): Promise<WorkflowEngine> {
  const o = s.options;
  const host = createEngineHost({
    record: d.record,
    policy: d.policy,
    decryptor: o.decryptor,
    redactor: o.redactor,
    output: o.output,
    outbound: { timeoutMs: o.timeouts.outboundMs, maxResponseBytes: o.limits.outboundResponseBytes },
    lookup: o.lookup,
    now: o.now,
    transport: o.transport,
    calls: s.registry,
    metrics: o.metrics,
  });
  return createWorkflowEngine(d.workflow, {
    host: {
      ...host,
      persistence: plan.get(d.record.deploymentId),
      files: createFileHost(files, fileLimitsOf(o)),
      // Checked at start (packager/setup.ts): granted means the runtime has the capability.
      packager: packagerGranted(d.record) && o.packager !== undefined,
    },
    data: d.record.data ?? {},
    // The record's scriptTimeoutMs wins over AGENT_SCRIPT_TIME_MS (compiler SPEC.md §8.4).
    limits: { timeMs: scriptTimeMsOf(d.record, o.timeouts), splitTimeMs: o.timeouts.splitMs },
    redactor: o.redactor,
  });
}

function portOf(ports: Readonly<Record<string, number>> | undefined, key: string): number | undefined {
  return ports !== undefined && Object.hasOwn(ports, key) ? ports[key] : undefined;
}

function serversOf(
  s: Shared,
  d: VerifiedDeployment,
  engine: WorkflowEngine,
  packager: PackagerBinding | undefined,
): ServerSpec[] {
  const o = s.options;
  const entries = d.record.allowHttpServerAccess ?? [];
  const serverIds = new Set(entries.map((e) => e.id));
  const tcp = tcpRoutes(d.record.deploymentId, engine.steps, entries, s.tcp.maxFrameBytes);
  const routes = httpRoutes(
    d.record.deploymentId,
    engine.steps,
    engine,
    serverIds,
    assetServerIds(d.record),
    referenceSwitches(d.record).includes('httpRequestEnvelope'),
    packager,
  );
  const tcpServerOf = (serverId: string) =>
    createTcpTriggerServer({
      deploymentId: d.record.deploymentId,
      serverId,
      route: tcp.get(serverId),
      engine,
      limits: s.tcp,
      output: o.output,
      tracker: s.tracker,
      runs: s.eventRuns,
    });
  return entries
    .map((e) => {
      // Own properties only: a server id such as `toString` must not find an inherited function.
      const port =
        portOf(o.ports, `${d.record.deploymentId}/${e.id}`) ?? portOf(o.ports, e.id) ?? e.port ?? 0;
      const list: TriggerRoute[] = routes.get(e.id) ?? [];
      if (isTcpServer(e)) return { e, port, server: tcpServerOf(e.id) };
      const server = createTriggerServer({
        routes: list,
        limits: o.limits,
        timeouts: o.timeouts,
        output: o.output,
        tracker: s.tracker,
        runs: s.httpRuns,
        assets: s.archives.get(d.record.deploymentId)?.get(e.id),
        deploymentId: d.record.deploymentId,
        serverId: e.id,
        metrics: o.metrics,
      });
      // In-process calls reach every HTTP server, inProcOnly ones included (those never listen).
      s.registry.addHttpServer(d.record.deploymentId, e.id, server);
      return { e, port, server };
    })
    .filter(({ e }) => !isInProcOnly(e))
    .map(({ e, port, server }) => {
      return {
        deploymentId: d.record.deploymentId,
        id: e.id,
        port,
        bindAddress: o.bindAddress ?? e.bindAddress ?? '127.0.0.1',
        server,
      };
    });
}

const fileLimitsOf = (o: RuntimeOptions): FileLimits => ({ ...DEFAULT_FILE_LIMITS, ...o.fileLimits });

const EMPTY_INPUT = () => ({ body: undefined, stream: undefined, headers: {}, properties: {} });

async function triggerOnce(
  s: Shared,
  engines: ReadonlyMap<string, WorkflowEngine>,
  deploymentId: string,
  stepId: string,
): Promise<StepResult | undefined> {
  const engine = engines.get(deploymentId);
  if (engine === undefined || !engine.steps.some((st) => st.stepId === stepId))
    throw new AgentError(
      'AGENT_STEP_NOT_FOUND',
      `deployment "${deploymentId}" has no step ${JSON.stringify(stepId.slice(0, 200))}`,
    );
  return reportedRun(
    { tracker: s.tracker, output: s.options.output },
    { deploymentId, stepId, trigger: 'direct' },
    () => engine.runStep(stepId, EMPTY_INPUT()),
  );
}

/**
 * Runs verified deployments: checks and plans their persistence, creates one engine per deployment and one
 * trigger server per `allowHttpServerAccess` entry, reports every unsupported feature (one warning line each)
 * and prepares their schedules. No listen() and no process.env: the caller listens and starts the triggers.
 * Packaged asset zips (`serveFromPackagedAsset`) are opened and validated here, once.
 * @throws coded errors: `ENGINE_PERSISTENCE_INVALID`, `AGENT_PERSISTENCE_CONFLICT`, `AGENT_TRIGGER_*`,
 *   `AGENT_ASSET_UNREADABLE`, `AGENT_ASSET_INVALID`,
 *   `WORKFLOW_*` from the engine.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const tracker = new RunTracker();
  const { output, redactor } = options;
  const metrics = options.metrics ?? NO_METRICS;
  const eventRuns = new HttpRunCounters(metrics, 'event');
  const registry = new DeploymentRegistry({ output, tracker, redactor, runs: eventRuns });
  const s: Shared = {
    options,
    httpRuns: new HttpRunCounters(metrics, 'http'),
    eventRuns,
    tracker,
    registry,
    tcp: tcpLimitsOf(options.tcp),
    archives: new Map(),
  };
  const allArchives = () => [...s.archives.values()].flatMap((m) => [...m.values()]);
  const persistence = planPersistence(options.deployments, options.dataDir, options.authStoreSecret);
  const engines = new Map<string, WorkflowEngine>();
  const servers: ServerSpec[] = [];
  const timed: TimedDeployment[] = [];
  const watches: WatchSpec[] = [];
  const fileOptions = { baseDir: options.fileBaseDir ?? process.cwd(), root: options.fileRoot };
  try {
    // ADR 0079: lower startupPriority first; a deferLoading engine is created on its first run.
    for (const d of startupOrder(options.deployments)) {
      const files = compileFileAccess(d.record, fileOptions);
      // ADR 0136: the grant, the operations and the directories are checked before the engine starts.
      const packager = packagerGranted(d.record)
        ? packagerBindingOf(
            d.record,
            listSteps(d.workflow, d.record.data ?? {}),
            files,
            options.packager,
            output,
          )
        : undefined;
      const engine = isDeferred(d.record)
        ? new DeferredEngine(d.workflow, () => startEngine(s, d, persistence, files), d.record.data ?? {})
        : await startEngine(s, d, persistence, files);
      engines.set(d.record.deploymentId, engine);
      registry.add(d.record, engine);
      const archives = await openServerArchives(d.record, options.fileBaseDir ?? process.cwd());
      s.archives.set(d.record.deploymentId, archives);
      timed.push({ deploymentId: d.record.deploymentId, engine, record: d.record });
      servers.push(...serversOf(s, d, engine, packager));
      watches.push(...fileWatchSpecs(d.record.deploymentId, engine, files, fileLimitsOf(options)));
      // One line per unsupported feature, at start-up, never first at run time.
      for (const use of unsupportedUses(d.record, d.workflow, engine)) {
        output.warn('unsupported feature', { deploymentId: d.record.deploymentId, ...use });
      }
      const switches = referenceSwitches(d.record);
      output.info('deployment loaded', {
        deploymentId: d.record.deploymentId,
        source: d.source,
        steps: engine.steps.length,
        ...(engine instanceof DeferredEngine ? { deferred: true } : {}),
        ...(packager === undefined ? {} : { packager: true }),
        // The deliberate differences this deployment switched back to the reference's behaviour.
        ...(switches.length > 0 ? { referenceBehaviour: switches.join(',') } : {}),
      });
    }
  } catch (err) {
    for (const engine of engines.values()) engine.dispose();
    await closePersistence(persistence);
    await closeArchives(allArchives());
    throw err;
  }
  const scheduling = createTimedTriggers(timed, s.tracker, output, undefined, metrics);
  const watchers = createFileWatchers(watches, {
    engines,
    tracker: s.tracker,
    output,
    limits: fileLimitsOf(options),
    dataDir: options.dataDir,
    runs: s.eventRuns,
  });
  let keepAlive: NodeJS.Timeout | undefined;
  let state: 'created' | 'started' | 'stopped' = 'created';
  const counters = () => mergeCounters(scheduling.counters(), s.httpRuns.counters(), s.eventRuns.counters());
  return {
    servers,
    engines,
    output,
    decryptor: options.decryptor,
    tracker: s.tracker,
    startTriggers() {
      if (state !== 'created') return;
      state = 'started';
      // A runtime is a service: it runs until stopped even when no listener or timer holds the event loop.
      keepAlive = setInterval(() => undefined, 2 ** 31 - 1);
      scheduling.start();
      watchers.start();
    },
    startFileWatchers: (deploymentId, stepId) =>
      state === 'stopped' ? 0 : watchers.startStep(deploymentId, stepId),
    checkFileWatchers: () => watchers.scanStarted(),
    stepCounters: counters,
    triggerStep: (deploymentId, stepId) => triggerOnce(s, engines, deploymentId, stepId),
    async stop(drainMs) {
      if (state === 'stopped') return true;
      const started = state === 'started';
      state = 'stopped';
      // HTTP triggers answer 503 AGENT_SHUTTING_DOWN from here on; runs in flight finish.
      s.tracker.close();
      registry.stop();
      scheduling.stop();
      watchers.stop();
      clearInterval(keepAlive);
      const idle = await s.tracker.idle(drainMs);
      await watchers.close();
      if (started) for (const c of counters()) output.info('step counters', { ...c });
      for (const engine of engines.values()) engine.dispose();
      await closePersistence(persistence);
      await closeArchives(allArchives());
      return idle;
    },
  };
}
