import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redactor } from '@org/workflow-engine';
import {
  closeAll,
  createOutput,
  createRuntime,
  createStringDecryptor,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  hostPolicyOf,
  listenAll,
  packagerGranted,
  registerRecordSecrets,
  type Limits,
  type PackagerCapability,
  type Runtime,
  type Timeouts,
} from '@org/workflow-runtime';
import type { CallOutcome, ObservedMetric } from './assertions.js';
import { TestRunnerError } from './errors.js';
import type { DeployInput, Deployer } from './run.js';
import { rethrowAsRefusedConnection } from './internal/refused-connection.js';
import { scriptTimeOf } from './internal/script-time.js';
import { stringKeysOf } from './internal/string-keys.js';
import { routeCallUrl } from './routing.js';
import type { CallSpec } from './test-file.js';

/** Options of {@link createInProcessDeployer}. */
export interface InProcessDeployerOptions {
  /** Byte caps of the deployment (default: the agent's defaults). */
  readonly limits?: Partial<Limits>;
  /** Time limits of the deployment (default: the agent's defaults). */
  readonly timeouts?: Partial<Timeouts>;
  /** Parent of each run's private data directory (default: the OS temp directory). Removed after each run. */
  readonly tempDir?: string;
  /** Every raw output line of every run, e.g. for `--debug` (lines are already redacted). */
  readonly onLine?: (test: string, line: string) => void;
  /**
   * The packager capability for a test whose bootstrap grants `allowPackagerAccess` (ADR 0136), as the agent has it;
   * a function is called only for such a test (the command line loads `@org/packager` then). Without it such a
   * bootstrap is refused (`AGENT_PACKAGER_UNAVAILABLE`).
   */
  readonly packager?: PackagerCapability | (() => PackagerCapability | Promise<PackagerCapability>);
}

/** The capability for a test whose bootstrap grants it, else none (nothing is loaded for the others). */
async function packagerFor(
  record: Parameters<typeof packagerGranted>[0],
  given: InProcessDeployerOptions['packager'],
): Promise<PackagerCapability | undefined> {
  if (given === undefined || !packagerGranted(record)) return undefined;
  return typeof given === 'function' ? await given() : given;
}

/** How long a deployer waits for in-flight runs to drain when it stops a deployment. */
const DRAIN_MS = 1_000;

/** Output fields that are not worth repeating in a log line the assertions match against. */
const QUIET_FIELDS = new Set(['ts', 'level', 'msg', 'deploymentId', 'source']);

interface Collected {
  metrics: ObservedMetric[];
  logs: string[];
  errors: string[];
}

/** One JSON output line → a metric, or a log line `msg {fields}` (the text the assertions search). */
function collect(into: Collected, line: string): void {
  let parsed: unknown;
  try {
    // eslint-disable-next-line no-restricted-syntax -- a line createOutput wrote with JSON.stringify, not input
    parsed = JSON.parse(line);
  } catch {
    into.logs.push(line.trimEnd());
    return;
  }
  const o = parsed as Record<string, unknown>;
  if (o['type'] === 'metric') {
    into.metrics.push({
      key: String(o['key']),
      value: Number(o['value']),
      timestamp: Number(o['timestamp']),
      dimensions: (o['dimensions'] ?? {}) as Record<string, string>,
    });
    return;
  }
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!QUIET_FIELDS.has(k) && v !== undefined) rest[k] = v;
  const msg = typeof o['msg'] === 'string' ? o['msg'] : '';
  into.logs.push(Object.keys(rest).length === 0 ? msg : `${msg} ${JSON.stringify(rest)}`);
  if (msg === 'step errored' || msg === 'step run failed') {
    const why =
      typeof o['errors'] === 'string' ? o['errors'] : typeof o['code'] === 'string' ? o['code'] : 'failed';
    into.errors.push(`step "${String(o['stepId'])}": ${why}`);
  } else if (o['source'] === 'engine') {
    // The engine's own lines: an errored sendToStep callee, a failed sendToStepAndForget run.
    into.errors.push(`step "${String(o['stepId'])}": ${msg}`);
  }
}

async function sendCall(call: CallSpec, url: string, signal: AbortSignal): Promise<CallOutcome> {
  const timeout = AbortSignal.timeout(call.timeoutSeconds * 1000);
  try {
    const res = await fetch(url, {
      method: call.method,
      headers: call.headers,
      body: call.method === 'GET' || call.method === 'HEAD' ? undefined : call.body,
      signal: AbortSignal.any([signal, timeout]),
      redirect: 'manual',
    });
    const headers = Object.create(null) as Record<string, string[]>; // a header named __proto__ stays a header
    res.headers.forEach((v, k) => (headers[k] = [v]));
    return { status: res.status, headers, body: new Uint8Array(await res.arrayBuffer()) };
  } catch (err) {
    if (timeout.aborted) return { error: `no answer within ${call.timeoutSeconds} s` };
    return { error: err instanceof Error ? err.message : 'request failed' };
  }
}

/** The reason a call still waiting for the mock is cut: the test's wait ended before it was answered. */
function waitEnded(waitSeconds: number): TestRunnerError {
  return new TestRunnerError(
    'TESTRUNNER_TIMEOUT',
    `secondsToWaitForCompletion (${waitSeconds} s) ended before the mock answered`,
  );
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * How the named step is reached: by its HTTP trigger, by its files (a `fileWatcher` trigger), by running it, or
 * not at all (no such step).
 */
function stepKind(
  runtime: Runtime,
  deploymentId: string,
  stepId: string,
): 'http' | 'watch' | 'run' | 'missing' {
  const steps = runtime.engines.get(deploymentId)?.steps.filter((s) => s.stepId === stepId) ?? [];
  if (steps.length === 0) return 'missing';
  const has = (kind: string) => (t: unknown) => typeof t === 'object' && t !== null && kind in t;
  if (steps.some((s) => has('http')(s.trigger))) return 'http';
  return steps.some((s) => has('fileWatcher')(s.trigger)) ? 'watch' : 'run';
}

/** Waits for the runtime's runs to finish within the wait; false (and why, in `errors`) when they did not. */
async function idleInTime(
  runtime: Runtime,
  stepId: string,
  collected: Collected,
  until: { readonly deadline: number; readonly signal: AbortSignal },
): Promise<boolean> {
  const left = until.deadline - performance.now();
  if (!until.signal.aborted && left > 0 && (await runtime.tracker.idle(left))) return true;
  collected.errors.push(`step "${stepId}" was still running when the wait ended: no call was made`);
  return false;
}

/**
 * A step with a `fileWatcher` trigger is driven by its files, as on the agent (issue 28): its watchers start
 * (no other trigger), the first check of its files runs it for what they hold, then the calls go out, and one
 * more check delivers what they wrote, before the run is judged.
 */
async function watchFiles(
  runtime: Runtime,
  input: DeployInput,
  ports: ReadonlyMap<number, number>,
  collected: Collected,
  until: { readonly deadline: number; readonly signal: AbortSignal },
): Promise<CallOutcome[]> {
  const { test } = input;
  runtime.startFileWatchers(test.deploymentId, test.stepId);
  if (test.calls.length === 0) return [];
  if (!(await idleInTime(runtime, test.stepId, collected, until))) return [];
  const outcomes = await sendCalls(test.calls, ports, collected, until.signal);
  await runtime.checkFileWatchers();
  return outcomes;
}

async function sendCalls(
  calls: readonly CallSpec[],
  ports: ReadonlyMap<number, number>,
  collected: Collected,
  signal: AbortSignal,
): Promise<CallOutcome[]> {
  const outcomes: CallOutcome[] = [];
  for (const call of calls) {
    if (signal.aborted) break;
    let url: string;
    try {
      url = routeCallUrl(call.url, ports);
    } catch (err) {
      const why = err instanceof Error ? err.message : 'invalid call';
      collected.errors.push(why);
      outcomes.push({ error: why });
      continue;
    }
    outcomes.push(await sendCall(call, url, signal));
  }
  return outcomes;
}

/**
 * Runs the test's trigger (ADR 0072). A `testThisStep` with an HTTP trigger is triggered by the
 * `makeTheseCalls`, sent in order; one with a `fileWatcher` trigger by its files (`watchFiles`). Any other step
 * runs once (`runtime.triggerStep`); when the test also has
 * calls, they go out after that run and everything it started have finished, unless the wait ended first
 * (`until.deadline`, `until.signal`: aborted when the deployer stops waiting, which also stops the calls). A step
 * the deployment does not have is the runtime's `AGENT_STEP_NOT_FOUND`, unless the calls alone trigger the test.
 */
async function trigger(
  runtime: Runtime,
  input: DeployInput,
  ports: ReadonlyMap<number, number>,
  collected: Collected,
  until: { readonly deadline: number; readonly signal: AbortSignal },
): Promise<CallOutcome[]> {
  const { test } = input;
  const kind = stepKind(runtime, test.deploymentId, test.stepId);
  if (kind === 'watch') return watchFiles(runtime, input, ports, collected, until);
  if (test.calls.length === 0 || kind === 'run') {
    await runtime.triggerStep(test.deploymentId, test.stepId);
    if (test.calls.length === 0) return [];
    if (!(await idleInTime(runtime, test.stepId, collected, until))) return [];
  }
  return sendCalls(test.calls, ports, collected, until.signal);
}

/**
 * The deployer `oapp test` uses: deploys one prepared test on `@org/workflow-runtime` in this process (the
 * agent's engine, trigger servers and host policy), with every allowed outbound call answered by the test's
 * mock transport, the test's fixed clock, and trigger servers on loopback port 0. A `testThisStep` with an HTTP
 * trigger is triggered by the `makeTheseCalls`, sent to those servers in order; any other step runs once, and
 * then the calls (if any) are sent; a step with a `fileWatcher` trigger is driven by its files (its watchers start,
 * in the test's file root). `-2/` strings open with the keys in the test's `AGENT_STRING_SECRETKEYS`
 * variable (legacy `OPSCOTCH_STRING_SECRETKEYS`). Schedules (`timer`, `runOnce`) are not started: a
 * test runs the step it names, once. The run ends when the triggered work is done or `secondsToWaitForCompletion`
 * passed (then `completed` is false); outbound calls still waiting for a mock's `delay` are cut with
 * `TESTRUNNER_TIMEOUT`, the deployment is stopped and its private data directory removed.
 */
export function createInProcessDeployer(options: InProcessDeployerOptions = {}): Deployer {
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  return async (input) => {
    const { test, signal } = input;
    const collected: Collected = { metrics: [], logs: [], errors: [] };
    const redactor = new Redactor();
    registerRecordSecrets(test.bootstrap, redactor);
    const stringKeys = stringKeysOf(test.variables, redactor);
    // AGENT_SCRIPT_TIME_MS among the test's variables, as in the agent's environment; the bootstrap's own
    // scriptTimeoutMs wins in the runtime (workflow-compiler SPEC.md §8.4).
    const testTimeouts: Timeouts = { ...timeouts, scriptMs: scriptTimeOf(test.variables, timeouts.scriptMs) };
    const sink = (line: string) => {
      options.onLine?.(test.name, line);
      collect(collected, line);
    };
    const output = createOutput(sink, redactor, undefined, 'debug');
    const fixed = test.timestampOverride;
    const dataDir = await mkdtemp(join(options.tempDir ?? tmpdir(), 'oapp-test-'));
    let runtime: Runtime | undefined;
    const cutCalls = new AbortController();
    try {
      const servers = test.bootstrap.allowHttpServerAccess ?? [];
      const packager = await packagerFor(test.bootstrap, options.packager);
      runtime = await createRuntime({
        ...(packager === undefined ? {} : { packager }),
        deployments: [
          {
            record: test.bootstrap,
            workflow: test.workflow,
            policy: hostPolicyOf(test.bootstrap, []),
            source: 'test',
          },
        ],
        redactor,
        output,
        decryptor: createStringDecryptor(stringKeys),
        // ADR 0130: what authentication contexts persist is sealed; a test's store lives for the test only.
        authStoreSecret: stringKeys[0]?.recipientSecretKey ?? randomBytes(32),
        limits,
        timeouts: testTimeouts,
        dataDir,
        ports: Object.fromEntries(servers.map((s) => [s.id, 0])),
        bindAddress: '127.0.0.1',
        now: fixed === undefined ? undefined : () => fixed,
        // Every call can be cut when the test ends (cutCalls, in `finally`). A host that is not the mock refuses
        // the connection (issue 28): the step's httpConnectFailedProcessor runs, and nothing is sent.
        transport: (req) =>
          input
            .transport({ ...req, signal: AbortSignal.any([req.signal, cutCalls.signal]) })
            .catch(rethrowAsRefusedConnection),
        // Relative allowFileAccess paths start at the test directory and stay inside the test root (S155).
        fileBaseDir: test.fileDirs?.baseDir,
        fileRoot: test.fileDirs?.root ?? dataDir,
      });
      const listening = await listenAll(runtime);
      const ports = new Map<number, number>();
      for (const s of servers) {
        const bound = listening.find((l) => l.id === s.id);
        if (bound !== undefined && s.port !== undefined) ports.set(s.port, bound.port);
      }
      const waitMs = test.waitSeconds * 1000;
      const started = performance.now();
      const stopWaiting = new AbortController();
      const waiting = AbortSignal.any([signal, stopWaiting.signal]);
      const calls = await Promise.race([
        trigger(runtime, input, ports, collected, { deadline: started + waitMs, signal: waiting }),
        wait(waitMs, waiting).then(() => undefined),
      ]).finally(() => stopWaiting.abort());
      const left = Math.max(0, waitMs - (performance.now() - started));
      const completed = calls !== undefined && (await runtime.tracker.idle(left));
      return {
        metrics: collected.metrics,
        logs: collected.logs,
        calls: calls ?? [],
        completed,
        errors: collected.errors,
        redact: (text) => redactor.redact(text),
      };
    } finally {
      // The wait is over (or the deploy failed, or the runner gave up): a call still waiting for a mock's delay
      // is cut now rather than drained, so neither the drain below nor its timer outlives the test (issue 27).
      cutCalls.abort(waitEnded(test.waitSeconds));
      if (runtime !== undefined) {
        await runtime.stop(DRAIN_MS);
        await closeAll(runtime, 0);
      }
      await rm(dataDir, { recursive: true, force: true });
    }
  };
}
