import { afterEach, describe, expect, it } from 'vitest';
import { runTests, type Deployer, type Observation, type RunnerConfig } from '../src/index.js';
import { config, project, workflow } from './fixtures.js';

let cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.forEach((c) => c());
  cleanups = [];
});

const flow = { 'tests/flow.json': workflow() };
const metricTest = (key: string, extra: Record<string, unknown> = {}) => ({
  fromDirectory: '',
  testThisStep: 'probe',
  useThisTestConfigFile: 'flow.json',
  theseMetricsShouldHaveBeenSent: [{ key, value: 1 }],
  ...extra,
});

function setup(tests: Record<string, unknown>, extra: Record<string, unknown> = {}): RunnerConfig {
  const p = project({ 'resources/.keep': '', ...flow, ...tests });
  cleanups.push(p.cleanup);
  return config(p.root, extra);
}

const observed = (over: Partial<Observation> = {}): Observation => ({
  metrics: [],
  logs: [],
  calls: [],
  completed: true,
  ...over,
});

/** A fake deployer: "runs" the step by sending the metric named after the step's test, and calls the mock once. */
const fake: Deployer = async ({ test, transport }) => {
  const key = test.name.replace(/^tests\//, '').replace(/\.test\.json$/, '');
  for (const ep of test.endpoints) await transport({ url: ep.whenThisIsCalled, method: 'GET', headers: {} });
  return observed({
    metrics: [{ key, value: 1, timestamp: test.timestampOverride ?? 0, dimensions: {} }],
    logs: [`ran ${test.stepId}`],
  });
};

describe('runTests', () => {
  it('runs discovered tests in name order, skips ignored ones, and counts', async () => {
    const cfg = setup({
      'tests/b.test.json': metricTest('b'),
      'tests/a.test.json': metricTest('a', {
        mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/x' }],
      }),
      'tests/c.test.json': metricTest('not-c'),
      'tests/d.test.json': metricTest('d', { ignore: 'true' }),
    });
    const seen: string[] = [];
    const s = await runTests(cfg, { deploy: fake, onResult: (r) => seen.push(r.name) });
    expect(s.results.map((r) => [r.name, r.status])).toEqual([
      ['tests/a.test.json', 'passed'],
      ['tests/b.test.json', 'passed'],
      ['tests/c.test.json', 'failed'],
      ['tests/d.test.json', 'skipped'],
    ]);
    expect(s.results[0]?.mockCalls).toHaveLength(1);
    expect(s.results[3]?.skipReason).toBe('ignore: true');
    expect([s.passed, s.failed, s.skipped]).toEqual([2, 1, 1]);
    expect(seen).toHaveLength(4);
  });

  it('runs only the given test files', async () => {
    const cfg = setup({ 'tests/a.test.json': metricTest('a'), 'tests/b.test.json': metricTest('b') });
    const s = await runTests(cfg, { deploy: fake, tests: ['tests/b.test.json'] });
    expect(s.results.map((r) => r.name)).toEqual(['tests/b.test.json']);
  });

  it('turns an unreadable or invalid test into a failed result, not a thrown error', async () => {
    const cfg = setup({
      'tests/bad.test.json': '{"fromDirectory": ',
      'tests/out.test.json': metricTest('o', { useThisTestConfigFile: '../../x.json' }),
    });
    const s = await runTests(cfg, { deploy: fake });
    expect(s.results.map((r) => [r.status, r.failures[0]?.kind])).toEqual([
      ['failed', 'prepare'],
      ['failed', 'prepare'],
    ]);
    expect(s.results[1]?.failures[0]?.message).toContain('leads out of the test directory');
  });

  it('repeats every test for each iteration', async () => {
    const cfg = setup(
      { 'tests/a.test.json': metricTest('a'), 'tests/b.test.json': metricTest('b') },
      { iterations: 3 },
    );
    const s = await runTests(cfg, { deploy: fake });
    expect(s.results.map((r) => `${r.name}#${r.iteration}`)).toEqual([
      'tests/a.test.json#1',
      'tests/b.test.json#1',
      'tests/a.test.json#2',
      'tests/b.test.json#2',
      'tests/a.test.json#3',
      'tests/b.test.json#3',
    ]);
  });

  it('never runs more than concurrency tests at once, and does use that many', async () => {
    const tests = Object.fromEntries(
      ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => [`tests/${n}.test.json`, metricTest(n)]),
    );
    const cfg = setup(tests, { concurrency: 3 });
    let running = 0;
    let peak = 0;
    const deploy: Deployer = async (input) => {
      running++;
      peak = Math.max(peak, running);
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      running--;
      return fake(input);
    };
    const s = await runTests(cfg, { deploy });
    expect(s.passed).toBe(7);
    expect(peak).toBe(3);
  });

  it('with stopOnFailure starts no test after the first failure and skips the rest', async () => {
    const cfg = setup(
      {
        'tests/a.test.json': metricTest('a'),
        'tests/b.test.json': metricTest('wrong'),
        'tests/c.test.json': metricTest('c'),
      },
      { stopOnFailure: true },
    );
    const deployed: string[] = [];
    const s = await runTests(cfg, { deploy: (i) => (deployed.push(i.test.name), fake(i)) });
    expect(s.results.map((r) => r.status)).toEqual(['passed', 'failed', 'skipped']);
    expect(s.results[2]?.skipReason).toContain('stopOnFailure');
    expect(deployed).toEqual(['tests/a.test.json', 'tests/b.test.json']);
  });

  it('fails a test whose deployer gives no result by the deadline, and aborts its signal', async () => {
    const cfg = setup({ 'tests/a.test.json': metricTest('a', { secondsToWaitForCompletion: 0 }) });
    let aborted = false;
    const deploy: Deployer = ({ signal }) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve(observed());
        });
      });
    const s = await runTests(cfg, { deploy, graceMs: 0 });
    expect(s.results[0]?.failures[0]).toMatchObject({ kind: 'timeout' });
    expect(aborted).toBe(true);
  });

  describe('a run the deployer reports as not finished within secondsToWaitForCompletion (issue 27)', () => {
    const noExpectation = (extra: Record<string, unknown>) => ({
      fromDirectory: '',
      testThisStep: 'probe',
      useThisTestConfigFile: 'flow.json',
      ...extra,
    });

    it('fails it with a timeout naming the test and the wait, even with no expectation; the next test still runs', async () => {
      const cfg = setup({
        'tests/a.test.json': noExpectation({ secondsToWaitForCompletion: 0.25 }),
        'tests/b.test.json': noExpectation({}),
      });
      const deploy: Deployer = ({ test }) =>
        Promise.resolve(observed({ completed: test.name !== 'tests/a.test.json' }));
      const s = await runTests(cfg, { deploy });
      expect(s.results.map((r) => r.status)).toEqual(['failed', 'passed']);
      expect(s.results[0]?.failures).toEqual([
        {
          kind: 'timeout',
          message: 'timed out: tests/a.test.json did not finish within secondsToWaitForCompletion (0.25 s)',
          expected: 'the run finished within 0.25 s',
          actual: 'still running after 0.25 s; it was stopped',
        },
      ]);
    });

    it('lists the timeout first, then the expectations the run missed', async () => {
      const cfg = setup({ 'tests/a.test.json': metricTest('never-sent') });
      const s = await runTests(cfg, { deploy: () => Promise.resolve(observed({ completed: false })) });
      expect(s.results[0]?.failures.map((f) => f.kind)).toEqual(['timeout', 'metric-missing']);
      expect(s.results[0]?.failures[0]?.message).toContain('secondsToWaitForCompletion (10 s)');
    });

    it('closes the mock when the test ends: a delay the deployer left pending is cut and named in the failure', async () => {
      const cfg = setup({
        'tests/a.test.json': noExpectation({
          secondsToWaitForCompletion: 0.2,
          mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/slow', delay: 600_000 }],
        }),
      });
      let left: Promise<unknown> | undefined;
      // A deployer that stops waiting without cutting its outbound call.
      const deploy: Deployer = async ({ transport }) => {
        left = transport({ url: 'http://mockserver/slow', method: 'GET', headers: {} }).catch(
          (e: { code?: string }) => e.code,
        );
        await new Promise((resolve) => setImmediate(resolve));
        return observed({ completed: false });
      };
      const s = await runTests(cfg, { deploy });
      expect(await left).toBe('TESTRUNNER_TIMEOUT'); // settled now, not after 600 s
      const r = s.results[0];
      expect(r?.failures[0]?.actual).toBe(
        'still running after 0.2 s, waiting for the mock to answer: #0 GET http://mockserver/slow (delay 600000 ms); it was stopped',
      );
      expect(r?.mockCalls.map((c) => [c.outcome, c.reasons])).toEqual([
        ['aborted', ['no answer: the test had ended during its 600000 ms delay']],
      ]);
    });
  });

  it('fails a test whose deployer rejects, keeping the mock call log', async () => {
    const cfg = setup({ 'tests/a.test.json': metricTest('a') });
    const s = await runTests(cfg, { deploy: () => Promise.reject(new Error('port 11000 is taken')) });
    expect(s.results[0]?.failures[0]).toMatchObject({
      kind: 'deploy',
      message: 'could not deploy: port 11000 is taken',
    });
  });

  it('hands the deployer a prepared test and the mock transport; S156: a call to another host is refused, not sent', async () => {
    const cfg = setup({ 'tests/a.test.json': metricTest('a') });
    const deploy: Deployer = async ({ test, transport }) => {
      const refused = await transport({
        url: 'https://api.example.com/v1',
        method: 'GET',
        headers: {},
      }).catch((e: { code: string }) => e.code);
      return observed({
        metrics: [{ key: 'a', value: 1, timestamp: 0, dimensions: {} }],
        errors: [`call refused: ${refused as string}`],
        logs: [test.deploymentId],
      });
    };
    const s = await runTests(cfg, { deploy });
    // Issue 28: the refusal is what the workflow sees (a refused connection); the expectations judge the test.
    expect(s.results[0]?.status).toBe('passed');
    expect(s.results[0]?.errors).toEqual(['call refused: TESTRUNNER_HOST_NOT_MOCKED']);
    expect(s.results[0]?.mockCalls.map((c) => [c.outcome, c.url, c.reasons])).toEqual([
      [
        'not-mock',
        'https://api.example.com/v1',
        ['not mocked: answered as a refused connection, nothing was sent'],
      ],
    ]);
  });

  it('collects legacy fields once per field across config and tests', async () => {
    const cfg = setup(
      {
        'tests/a.test.json': metricTest('a', {
          theseMetricsShouldHaveBeenSent: [{ key: 'a', value: 1, toThisRoute: 'r' }],
        }),
        'tests/b.test.json': metricTest('b', {
          theseMetricsShouldHaveBeenSent: [{ key: 'b', value: 1, toThisRoute: 'r' }],
        }),
      },
      { license: 'licenses.txt' },
    );
    const s = await runTests(cfg, { deploy: fake });
    expect(s.legacy.map((l) => [l.field, l.files.length])).toEqual([
      ['license', 1],
      ['theseMetricsShouldHaveBeenSent[].toThisRoute', 2],
    ]);
  });

  it('skips everything not yet started when the run is cancelled', async () => {
    const cfg = setup({ 'tests/a.test.json': metricTest('a'), 'tests/b.test.json': metricTest('b') });
    const ac = new AbortController();
    const s = await runTests(cfg, { deploy: (i) => (ac.abort(), fake(i)), signal: ac.signal });
    expect(s.results.map((r) => r.status)).toEqual(['failed', 'skipped']);
  });

  it("passes every reported text through the deployment's redactor: failures and the mock call log", async () => {
    const cfg = setup({
      'tests/a.test.json': metricTest('never-sent', {
        mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/x', expectedPayload: 'p' }],
      }),
    });
    const leaky: Deployer = async ({ transport }) => {
      await transport({
        url: 'http://mockserver/x?key=sekret-7f3a',
        method: 'POST',
        headers: {},
        body: 'sekret-7f3a',
      });
      return observed({
        logs: ['got sekret-7f3a'],
        redact: (t) => t.replaceAll('sekret-7f3a', '<REDACTED>'),
      });
    };
    const [r] = (await runTests(cfg, { deploy: leaky })).results;
    expect(r!.status).toBe('failed');
    const reported = JSON.stringify([r!.failures, r!.mockCalls.map((c) => [c.url, c.reasons])]);
    expect(reported).toContain('<REDACTED>');
    expect(reported).not.toContain('sekret-7f3a');
  });
});
