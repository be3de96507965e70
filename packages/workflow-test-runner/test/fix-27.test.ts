import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessDeployer, runTests, type TestResult } from '../src/index.js';
import { config, project } from './fixtures.js';

// Issue 27, `oapp test` and time: a test whose mock answers after its secondsToWaitForCompletion fails with a
// timeout naming the test and the wait (even with no expectation), the other tests still run, and the runner, and
// `oapp test` as a process, end as soon as the last test has ended instead of waiting out the mock's delay.

let cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.forEach((c) => c());
  cleanups = [];
});

const WAIT_S = 0.2;
/** 150 times the wait. A runner that waits for it cannot pass the bounds below (half of it), however slow the host. */
const MOCK_DELAY_MS = 30_000;
/** Generous bound for "ended well before the mock would have answered": half the delay (the runs below take 0.3–4 s here, 2 cores, shared). */
const WELL_UNDER_MS = MOCK_DELAY_MS / 2;

const flow = {
  workflows: [
    {
      name: 'timing',
      steps: [
        {
          stepId: 'poll',
          urlGenerator: { script: "context.setUrl('api', '/slow');" },
          resultsProcessor: { script: "context.sendMetric('polled', 1);" },
        },
        {
          stepId: 'front',
          trigger: { http: { server: 'web', path: '/front', method: 'GET' } },
          resultsProcessor: { script: "context.sendToStep('poll', ''); context.setBody('done');" },
        },
        { stepId: 'quick', resultsProcessor: { script: "context.sendMetric('quick', 1);" } },
      ],
    },
  ],
};

const test = (stepId: string, extra: Record<string, unknown> = {}) => ({
  fromDirectory: '',
  testThisStep: stepId,
  useThisTestConfigFile: 'flow.json',
  useThisTestBootstrapFile: 'boot.json',
  ...extra,
});

/**
 * A run through the real runtime (two tests, each compiled and deployed; the wait itself is 0.2 s): about 0.5 s
 * here, 2 cores, shared, and several times that when the machine is busy.
 */
const IN_PROCESS_TEST_MS = 15_000;

const slowMock = { whenThisIsCalled: 'http://mockserver/slow', returnThisBody: 'ok', delay: MOCK_DELAY_MS };

/** Two tests, run one after the other: `a-slow` (its mock answers 150 waits late, no expectation) and `b-quick`. */
const suite = {
  'resources/.keep': '',
  'tests/flow.json': flow,
  'tests/boot.json': {
    allowExternalHostAccess: [{ id: 'api', host: 'http://mockserver' }],
    allowHttpServerAccess: [{ id: 'web', port: 11027 }],
  },
  'tests/a-slow.test.json': test('poll', {
    secondsToWaitForCompletion: WAIT_S,
    mockEndpointResponses: [slowMock],
  }),
  'tests/b-quick.test.json': test('quick', { theseMetricsShouldHaveBeenSent: [{ key: 'quick', value: 1 }] }),
};

/** The suite with `a-slow` in a script's own 10 s sleep instead of waiting for a mock. */
function sleepySuite(): Record<string, unknown> {
  const sleepy = structuredClone(flow);
  sleepy.workflows[0]!.steps.push({ stepId: 'nap', resultsProcessor: { script: 'context.sleep(10000);' } });
  return {
    ...suite,
    'tests/flow.json': sleepy,
    'tests/a-slow.test.json': test('nap', { secondsToWaitForCompletion: WAIT_S }),
  };
}

function setup(files: Record<string, unknown>): { root: string } {
  const p = project(files);
  cleanups.push(p.cleanup);
  return { root: p.root };
}

/** A mock `sleep` on a real timer that counts the delays still pending. */
function trackedSleep() {
  let pending = 0;
  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted === true) return reject(signal.reason as Error);
      pending++;
      const t = setTimeout(() => {
        pending--;
        resolve();
      }, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(t);
        pending--;
        reject(signal.reason as Error);
      });
    });
  return { sleep, pending: () => pending };
}

describe('runTests with createInProcessDeployer: a run past secondsToWaitForCompletion (issue 27)', () => {
  // The first run in a process starts a sandbox worker (≈ 0.8 s here). Started once beforehand, the slow test's
  // call reaches the mock well within its 0.2 s wait plus the runtime's 1 s drain, however busy the machine.
  beforeAll(async () => {
    const { root } = setup(suite);
    await runTests(config(root), { deploy: createInProcessDeployer(), tests: ['tests/b-quick.test.json'] });
  }, IN_PROCESS_TEST_MS);

  it(
    'fails it with a timeout naming the test and the wait, runs the next test, and ends well before the mock delay',
    async () => {
      const { root } = setup(suite);
      const tracked = trackedSleep();
      const seen: string[] = [];
      const started = performance.now();
      const summary = await runTests(config(root), {
        deploy: createInProcessDeployer(),
        mock: { sleep: tracked.sleep },
        onResult: (r) => seen.push(`${r.name} ${r.status}`),
      });
      const elapsed = performance.now() - started;
      expect(seen).toEqual(['tests/a-slow.test.json failed', 'tests/b-quick.test.json passed']);
      const slow = summary.results[0] as TestResult;
      expect(slow.failures.map((f) => f.kind)).toEqual(['timeout']);
      expect(slow.failures[0]).toEqual({
        kind: 'timeout',
        message: 'timed out: tests/a-slow.test.json did not finish within secondsToWaitForCompletion (0.2 s)',
        expected: 'the run finished within 0.2 s',
        actual:
          'still running after 0.2 s, waiting for the mock to answer: #0 GET http://mockserver/slow (delay 30000 ms); it was stopped',
      });
      expect(slow.mockCalls.map((c) => [c.outcome, c.status])).toEqual([['aborted', undefined]]);
      expect([summary.passed, summary.failed]).toEqual([1, 1]);
      // No mock delay is left pending once the run has resolved: nothing keeps the process alive.
      expect(tracked.pending()).toBe(0);
      expect(elapsed).toBeLessThan(WELL_UNDER_MS);
    },
    IN_PROCESS_TEST_MS,
  );

  it(
    "also when the run is in a script's own sleep: the sleep ends with the deployment (ENGINE_DISPOSED)",
    async () => {
      const { root } = setup(sleepySuite());
      const started = performance.now();
      const summary = await runTests(config(root), { deploy: createInProcessDeployer() });
      const elapsed = performance.now() - started;
      const [slow, quick] = summary.results as [TestResult, TestResult];
      expect(slow.failures.map((f) => f.kind)).toEqual(['timeout']);
      expect(quick.status).toBe('passed');
      expect(elapsed).toBeLessThan(7_000); // the sleep is 10 s; the runtime's drain waits 1 s, then disposes
    },
    IN_PROCESS_TEST_MS,
  );

  it(
    'also when the step is triggered by makeTheseCalls and its work waits for the slow mock',
    async () => {
      const { root } = setup({
        ...suite,
        'tests/a-slow.test.json': test('front', {
          secondsToWaitForCompletion: WAIT_S,
          mockEndpointResponses: [slowMock],
          makeTheseCalls: [{ url: 'http://localhost:11027/front', expectedResponse: 'done' }],
        }),
      });
      const started = performance.now();
      const summary = await runTests(config(root), { deploy: createInProcessDeployer() });
      const elapsed = performance.now() - started;
      const [slow, quick] = summary.results as [TestResult, TestResult];
      expect(slow.failures.map((f) => f.kind)).toEqual(['timeout', 'call-failed']);
      expect(slow.failures[0]?.message).toBe(
        'timed out: tests/a-slow.test.json did not finish within secondsToWaitForCompletion (0.2 s)',
      );
      expect(quick.status).toBe('passed');
      expect(elapsed).toBeLessThan(WELL_UNDER_MS);
    },
    IN_PROCESS_TEST_MS,
  );
});

const HERE = dirname(fileURLToPath(import.meta.url));
/** The built command line (`pnpm --filter @org/cli build`); it loads this package's dist. */
const OAPP_MAIN = join(HERE, '..', '..', '..', 'apps', 'cli', 'dist', 'main.js');
/**
 * A child process: node start-up, the cli, two test runs (2–4 s on this shared 2-core machine). The limit is above
 * the mock delay so that a process that waits for it fails on the elapsed-time assertion, not on the limit.
 */
const PROCESS_TEST_MS = MOCK_DELAY_MS + 10_000;

function runOapp(args: string[], cwd: string): Promise<{ code: number | null; out: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const proc = spawn(process.execPath, [OAPP_MAIN, ...args], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '' },
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, out, ms: performance.now() - started }));
    proc.stdin.end();
  });
}

describe('oapp test as a process (issue 27)', () => {
  it(
    'exits 1 with the timeout message as soon as the last test ended, well before the pending mock delay',
    async () => {
      expect(existsSync(OAPP_MAIN), `${OAPP_MAIN} missing: pnpm --filter @org/cli build`).toBe(true);
      const { root } = setup({
        ...suite,
        'testrunner.config.json': { resourceDirs: ['resources'], testDirs: ['tests'] },
      });
      const run = await runOapp(['test'], root);
      expect(run.out).toContain('✗ tests/a-slow.test.json');
      expect(run.out).toContain(
        'timed out: tests/a-slow.test.json did not finish within secondsToWaitForCompletion (0.2 s)',
      );
      expect(run.out).toContain('✓ tests/b-quick.test.json');
      expect(run.out).toContain('1 passed, 1 failed, 0 skipped');
      expect(run.code).toBe(1);
      expect(run.ms).toBeLessThan(WELL_UNDER_MS);
    },
    PROCESS_TEST_MS,
  );

  it(
    "exits without waiting for a script's own sleep (10 s) once its test has timed out",
    async () => {
      const { root } = setup({
        ...sleepySuite(),
        'testrunner.config.json': { resourceDirs: ['resources'], testDirs: ['tests'] },
      });
      const run = await runOapp(['test'], root);
      expect(run.out).toContain('1 passed, 1 failed, 0 skipped');
      expect(run.code).toBe(1);
      expect(run.ms).toBeLessThan(9_000); // the sleep alone is 10 s
    },
    PROCESS_TEST_MS,
  );
});
