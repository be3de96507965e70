import type { RunnerConfig } from './config-file.js';
import { discoverTests, findMisnamedTests, type DiscoveredTest } from './discover.js';
import { TestRunnerError } from './errors.js';
import { evaluateRun, type Failure, type Observation } from './assertions.js';
import { mergeLegacyNotices, type LegacyNotice } from './legacy.js';
import {
  createMockServer,
  type CreateMockServerOptions,
  type MockCall,
  type MockTransport,
} from './mock-server.js';
import { loadTest, prepareTest, type LoadedTest, type PreparedTest } from './prepare.js';
import { unmockedHostWarnings, type RunWarning } from './warnings.js';

/** What the runner hands a {@link Deployer} for one run of one test. */
export interface DeployInput {
  /** The prepared test: compiled workflow, complete bootstrap, step, calls, clock, wait, variables. */
  readonly test: PreparedTest;
  /** The only route out: every outbound HTTP call of the deployment must go here, never to the network. */
  readonly transport: MockTransport;
  /** Aborted when the runner stops waiting (deadline passed or run cancelled): stop and clean up. */
  readonly signal: AbortSignal;
  /** 1-based iteration number. */
  readonly iteration: number;
}

/**
 * Deploys one prepared test in process, triggers it, waits up to `test.waitSeconds` and reports what it saw
 * (`completed: false` when the wait ran out first: the runner then fails the test with `timeout`). Implemented by
 * the agent wiring; must resolve (not reject) when the workflow itself fails, with the failure in `errors`.
 * Rejecting means the harness could not run the test at all. Once it has settled, the runner closes the run's mock
 * server: a call still waiting for a mock's `delay` is cut with `TESTRUNNER_TIMEOUT`.
 */
export type Deployer = (input: DeployInput) => Promise<Observation>;

/** Options of {@link runTests}. */
export interface RunTestsOptions {
  deploy: Deployer;
  /** Run only these test files (absolute, or relative to the project root); default: every discovered test. */
  tests?: readonly string[];
  /** Extra time after `secondsToWaitForCompletion` before the runner gives up on a deployer. Default 30 000 ms. */
  graceMs?: number;
  /** Clock for durations, in ms. Default `performance.now`. */
  now?: () => number;
  /** Called as each result is known (completion order), e.g. to print its line at once. */
  onResult?: (result: TestResult) => void;
  /** Called for each warning, all of them before the first test starts (see {@link RunWarning}). */
  onWarning?: (warning: RunWarning) => void;
  /** Cancels the run: running deployers are aborted, no new test starts. */
  signal?: AbortSignal;
  /** Options for each test's mock server (a `sleep` for `delay`). */
  mock?: CreateMockServerOptions;
  /**
   * The environment for `${NAME}` in test bootstraps, as the agent reads its own (`oapp test` passes
   * `process.env`; this package reads none). Config and test `variables` win over it. Default: none.
   */
  environment?: Readonly<Record<string, string | undefined>>;
}

/** `passed`, `failed`, or `skipped` (ignored, disabled, or not run after an earlier failure). */
export type TestStatus = 'passed' | 'failed' | 'skipped';

/** The result of one run of one test. */
export interface TestResult {
  name: string;
  /** 1-based. */
  iteration: number;
  status: TestStatus;
  durationMs: number;
  failures: Failure[];
  skipReason?: string;
  /** The mock server's call log (empty when the test did not run). */
  mockCalls: readonly MockCall[];
  /** Run errors reported by the deployer. */
  errors: readonly string[];
  /** The deployment's log lines, for `debug` output. */
  logs: readonly string[];
}

/** Every result, the counts, and the legacy fields seen. */
export interface RunSummary {
  /** In run order: by iteration, then by test name. */
  results: TestResult[];
  passed: number;
  failed: number;
  skipped: number;
  legacy: LegacyNotice[];
  /** What was said before the run: files that look like tests but will not run, unmocked hosts (one per host). */
  warnings: RunWarning[];
}

/** Default of {@link RunTestsOptions.graceMs}. */
export const DEFAULT_GRACE_MS = 30_000;

interface Job {
  index: number;
  iteration: number;
  test: DiscoveredTest;
  loaded: LoadedTest | Error;
}

function skippedResult(job: Job, reason: string): TestResult {
  return {
    name: job.test.name,
    iteration: job.iteration,
    status: 'skipped',
    durationMs: 0,
    failures: [],
    skipReason: reason,
    mockCalls: [],
    errors: [],
    logs: [],
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : 'unknown error';
}

function loadAll(config: RunnerConfig, tests: DiscoveredTest[]): Map<string, LoadedTest | Error> {
  const out = new Map<string, LoadedTest | Error>();
  for (const t of tests) {
    try {
      out.set(t.name, loadTest(config, t));
    } catch (err) {
      out.set(t.name, err instanceof Error ? err : new Error('unknown error'));
    }
  }
  return out;
}

/** Runs the deployer under a deadline; the deadline aborts `signal` and fails the run with `TESTRUNNER_TIMEOUT`. */
async function deployWithDeadline(
  deploy: Deployer,
  input: Omit<DeployInput, 'signal'>,
  ms: number,
  outer: AbortSignal | undefined,
): Promise<Observation> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onCancel = (): void => undefined;
  const stop = new Promise<never>((_, reject) => {
    const fail = (why: string) => {
      const err = new TestRunnerError('TESTRUNNER_TIMEOUT', why);
      reject(err);
      ac.abort(err);
    };
    onCancel = () => fail('the run was cancelled');
    timer = setTimeout(() => fail(`no result within ${Math.round(ms / 1000)} s`), ms);
    if (outer?.aborted === true) fail('the run was cancelled');
    outer?.addEventListener('abort', onCancel, { once: true });
  });
  try {
    const observed = await Promise.race([deploy({ ...input, signal: ac.signal }), stop]);
    // A result that arrives once the runner has given up (deadline, cancellation) is not used.
    if (ac.signal.aborted) throw ac.signal.reason as Error;
    return observed;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onCancel);
  }
}

/** Seconds as a test file gives them: `0.2 s`, `10 s`. */
function seconds(n: number): string {
  return `${Number(n.toPrecision(6))} s`;
}

/**
 * The failure of a run still going when `secondsToWaitForCompletion` ran out (the deployer's `completed: false`):
 * whatever the test expects, even nothing, it did not finish in time. Names the test, the wait, and the mock
 * calls whose `delay` it was still waiting for.
 */
function waitFailure(test: PreparedTest, mockCalls: readonly MockCall[]): Failure {
  const cut = mockCalls
    .filter((c) => c.outcome === 'aborted' && c.endpoint !== null)
    .map((c) => {
      const ep = test.endpoints[c.endpoint as number];
      return `#${c.seq} ${c.method} ${c.url} (delay ${ep?.delay ?? 0} ms)`;
    });
  const wait = seconds(test.waitSeconds);
  return {
    kind: 'timeout',
    message: `timed out: ${test.name} did not finish within secondsToWaitForCompletion (${wait})`,
    expected: `the run finished within ${wait}`,
    actual:
      cut.length === 0
        ? `still running after ${wait}; it was stopped`
        : `still running after ${wait}, waiting for the mock to answer: ${cut.join(', ')}; it was stopped`,
  };
}

/** The failures of a finished deployment: a run past its wait first, then every expectation not met. */
function judge(prepared: PreparedTest, observed: Observation, mockCalls: readonly MockCall[]): Failure[] {
  const expectations = {
    metrics: prepared.spec.theseMetricsShouldHaveBeenSent,
    logs: prepared.spec.theseLogsShouldHaveBeenSent,
    logsAbsent: prepared.spec.logsShouldNotContain,
    calls: prepared.calls,
    endpoints: prepared.endpoints,
  };
  const failures = evaluateRun(expectations, observed, mockCalls);
  return observed.completed ? failures : [waitFailure(prepared, mockCalls), ...failures];
}

async function runJob(config: RunnerConfig, job: Job, options: RunTestsOptions): Promise<TestResult> {
  const now = options.now ?? (() => performance.now());
  const start = now();
  const base = { name: job.test.name, iteration: job.iteration };
  const failed = (
    f: Failure,
    mockCalls: readonly MockCall[] = [],
    errors: readonly string[] = [],
  ): TestResult => ({
    ...base,
    status: 'failed',
    durationMs: now() - start,
    failures: [f],
    mockCalls,
    errors,
    logs: [],
  });
  if (job.loaded instanceof Error) return failed({ kind: 'prepare', message: message(job.loaded) });
  if (job.loaded.spec.skip !== undefined) return skippedResult(job, job.loaded.spec.skip);
  let prepared: PreparedTest;
  try {
    prepared = await prepareTest(config, job.loaded, { environment: options.environment });
  } catch (err) {
    return failed({ kind: 'prepare', message: message(err) });
  }
  const mock = createMockServer(prepared.endpoints, options.mock);
  const deadline = prepared.waitSeconds * 1000 + (options.graceMs ?? DEFAULT_GRACE_MS);
  let observed: Observation;
  try {
    observed = await deployWithDeadline(
      options.deploy,
      { test: prepared, transport: mock.transport, iteration: job.iteration },
      deadline,
      options.signal,
    );
  } catch (err) {
    const kind = (err as { code?: unknown }).code === 'TESTRUNNER_TIMEOUT' ? 'timeout' : 'deploy';
    return failed(
      { kind, message: `${kind === 'timeout' ? 'timed out' : 'could not deploy'}: ${message(err)}` },
      mock.calls(),
    );
  } finally {
    // The test has ended: a mock delay still pending is cut, so its timer keeps nothing alive.
    mock.close();
  }
  const redact = observed.redact ?? ((t: string) => t);
  const failures = judge(prepared, observed, mock.calls()).map((f) => ({
    ...f,
    message: redact(f.message),
    ...(f.expected === undefined ? {} : { expected: redact(f.expected) }),
    ...(f.actual === undefined ? {} : { actual: redact(f.actual) }),
  }));
  const mockCalls = mock.calls().map((c) => ({
    ...c,
    url: redact(c.url),
    ...(c.reasons === undefined ? {} : { reasons: c.reasons.map(redact) }),
  }));
  return {
    ...base,
    status: failures.length === 0 ? 'passed' : 'failed',
    durationMs: now() - start,
    failures,
    mockCalls,
    errors: observed.errors ?? [],
    logs: observed.logs,
  };
}

/**
 * Runs every discovered test (or `options.tests`) `config.iterations` times, at most `config.concurrency` at once,
 * through the injected deployer. A test file that cannot be read or prepared is a failed test, not a thrown
 * error. A run not finished within its `secondsToWaitForCompletion` fails with `timeout`, and the other tests
 * still run. Each test's mock server is closed when the test ends, so no mock `delay` outlives its test. With
 * `stopOnFailure`, no test starts after the first failure; those not started are skipped. Before the first test
 * starts, `onWarning` hears of every file in the test directories that looks like a test but will not run (its
 * name does not end in `.test.json`; only when the tests are discovered, not named), and of every host some test
 * declares that is not the mock (calls to it are answered as a refused connection).
 *
 * @throws TestRunnerError only for the run as a whole: `TESTRUNNER_TOO_MANY_TESTS`, `TESTRUNNER_FILE_NOT_FOUND`
 *   (a test directory), `TESTRUNNER_PATH_OUTSIDE_ROOT` (an explicit test outside every test directory).
 */
export async function runTests(config: RunnerConfig, options: RunTestsOptions): Promise<RunSummary> {
  const tests = discoverTests(config, options.tests);
  // Issue 28: a file that looks like a test but will not run is named, never skipped in silence.
  const misnamed = options.tests !== undefined && options.tests.length > 0 ? [] : findMisnamedTests(config);
  const loaded = loadAll(config, tests);
  const loadedTests = [...loaded.values()].filter((l): l is LoadedTest => !(l instanceof Error));
  const warnings: RunWarning[] = [
    ...misnamed,
    ...unmockedHostWarnings(config, loadedTests, { environment: options.environment }),
  ];
  for (const w of warnings) options.onWarning?.(w);
  const jobs: Job[] = [];
  for (let iteration = 1; iteration <= config.iterations; iteration++) {
    for (const test of tests)
      jobs.push({ index: jobs.length, iteration, test, loaded: loaded.get(test.name) as LoadedTest | Error });
  }
  const results: TestResult[] = new Array<TestResult>(jobs.length);
  let next = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++] as Job;
      const r =
        stopped || options.signal?.aborted === true
          ? skippedResult(
              job,
              stopped ? 'not run: an earlier test failed (stopOnFailure)' : 'not run: the run was cancelled',
            )
          : await runJob(config, job, options);
      if (r.status === 'failed' && config.stopOnFailure) stopped = true;
      results[job.index] = r;
      options.onResult?.(r);
    }
  };
  await Promise.all(Array.from({ length: Math.min(config.concurrency, Math.max(jobs.length, 1)) }, worker));
  const legacy = mergeLegacyNotices([config.legacy, ...loadedTests.map((l) => l.spec.legacy)]);
  const count = (s: TestStatus) => results.filter((r) => r.status === s).length;
  return {
    results,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    legacy,
    warnings,
  };
}
