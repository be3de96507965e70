import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { encryptString, generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createInProcessDeployer, runTests, type RunnerConfig, type TestResult } from '../src/index.js';
import { config, project } from './fixtures.js';

// The real deployer: the agent's runtime (@org/workflow-runtime) in process, with the engine's sandbox.

let cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.forEach((c) => c());
  cleanups = [];
});

const T0 = 1_700_000_000_000;

/** A workflow with a timer-less outbound step, an HTTP-triggered step, and a step with persistence. */
const flow = {
  workflows: [
    {
      name: 'demo',
      steps: [
        {
          stepId: 'fetch-items',
          urlGenerator: { script: "context.setUrl('api', '/v1/items');" },
          resultsProcessor: {
            script:
              "var b = JSON.parse(context.getBody()); console.log('got ' + b.n + ' items'); " +
              "context.sendMetric(context.getTimestamp(), 'items', b.n, { source: 'api' });",
          },
        },
        {
          stepId: 'hello',
          trigger: { http: { server: 'web', path: '/hello', method: 'GET' } },
          resultsProcessor: { script: "context.setBody('hello at ' + context.getTimestamp());" },
        },
        {
          stepId: 'count',
          persistenceFile: 'count.db',
          resultsProcessor: {
            script:
              "var n = Number(context.getPersistedItem('n') || '0') + 1; context.setPersistedItem('n', String(n)); " +
              "context.sendMetric('count', n);",
          },
        },
        {
          stepId: 'slow',
          resultsProcessor: { script: "context.sleep(3000); context.sendMetric('late', 1);" },
        },
      ],
    },
  ],
};

const bootstrap = {
  allowExternalHostAccess: [
    { id: 'api', host: 'http://mockserver', allowList: [{ method: 'GET', uriPattern: '/v1/items' }] },
    { id: 'elsewhere', host: 'http://example.invalid' },
  ],
  allowHttpServerAccess: [{ id: 'web', port: 11000 }],
};

const base = (stepId: string, extra: Record<string, unknown> = {}) => ({
  fromDirectory: '',
  testThisStep: stepId,
  useThisTestConfigFile: 'flow.json',
  useThisTestBootstrapFile: 'boot.json',
  timestampOverride: T0,
  ...extra,
});

const items = (n: number) => ({
  whenThisIsCalled: 'http://mockserver/v1/items',
  returnThisBody: `{"n": ${n}}`,
});

function setup(tests: Record<string, unknown>, extra: Record<string, unknown> = {}): RunnerConfig {
  const p = project({
    'resources/.keep': '',
    'tests/flow.json': flow,
    'tests/boot.json': bootstrap,
    ...tests,
  });
  cleanups.push(p.cleanup);
  return config(p.root, extra);
}

async function run(tests: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const cfg = setup(tests, extra);
  const summary = await runTests(cfg, { deploy: createInProcessDeployer() });
  const by = (name: string) =>
    summary.results.find((r) => r.name === `tests/${name}.test.json`) as TestResult;
  return { summary, by };
}

describe('createInProcessDeployer (oapp test)', () => {
  it('gives context.files(id) the test directory as base; a path out of the test root is refused (S155)', async () => {
    const reader = {
      workflows: [
        {
          name: 'files',
          steps: [
            {
              stepId: 'read',
              resultsProcessor: { script: "console.log('read ' + context.files('data').read('in.txt'));" },
            },
          ],
        },
      ],
    };
    const boot = (dir: string) => ({
      allowFileAccess: [{ id: 'data', directoryOrFile: dir, READ: true, required: true }],
    });
    const test = (b: string) => ({
      fromDirectory: '',
      testThisStep: 'read',
      useThisTestConfigFile: 'reader.json',
      useThisTestBootstrapFile: b,
      theseLogsShouldHaveBeenSent: ['read hello'],
    });
    const { by } = await run({
      'outside/in.txt': 'secret',
      'tests/data/in.txt': 'hello',
      'tests/reader.json': reader,
      'tests/inside.json': boot('data'),
      'tests/escape.json': boot('../outside'),
      'tests/inside.test.json': test('inside.json'),
      'tests/escape.test.json': test('escape.json'),
    });
    expect(by('inside').failures).toEqual([]);
    expect(by('inside').status).toBe('passed');
    expect(by('escape').status).not.toBe('passed');
    expect(JSON.stringify(by('escape').failures)).toContain(
      'directoryOrFile leads out of the test directory',
    );
    expect(JSON.stringify(by('escape'))).not.toContain('secret');
  });

  it('runs testThisStep on the engine: mock answered, metric with the fixed clock and dimensions, log line', async () => {
    const { by } = await run({
      'tests/ok.test.json': base('fetch-items', {
        mockEndpointResponses: [{ ...items(3), withMethod: 'GET', thisManyTimes: 1 }],
        theseMetricsShouldHaveBeenSent: [
          { key: 'items', value: 3, timestamp: T0, dimensionMap: { source: 'api' } },
        ],
        theseLogsShouldHaveBeenSent: ['got 3 items'],
      }),
    });
    const r = by('ok');
    expect(r.failures).toEqual([]);
    expect(r.status).toBe('passed');
    expect(r.mockCalls.map((c) => [c.method, c.url, c.outcome])).toEqual([
      ['GET', 'http://mockserver/v1/items', 'answered'],
    ]);
  });

  it('sends makeTheseCalls to the HTTP trigger on a loopback port; two tests on the same port run side by side', async () => {
    const call = { url: 'http://localhost:11000/hello', expectedResponse: `hello at ${T0}` };
    const { summary } = await run(
      {
        'tests/a.test.json': base('hello', { makeTheseCalls: [call] }),
        'tests/b.test.json': base('hello', {
          makeTheseCalls: [
            call,
            {
              ...call,
              url: 'http://localhost:11000/nope',
              expectedResponseCode: 404,
              expectedResponse: undefined,
            },
          ],
        }),
      },
      { concurrency: 2 },
    );
    expect(summary.results.map((r) => [r.name, r.status, r.failures])).toEqual([
      ['tests/a.test.json', 'passed', []],
      ['tests/b.test.json', 'passed', []],
    ]);
  });

  it('each assertion kind fails against a real run', async () => {
    const { by } = await run({
      'tests/metric.test.json': base('fetch-items', {
        mockEndpointResponses: [items(3)],
        theseMetricsShouldHaveBeenSent: [{ key: 'items', value: 4 }],
      }),
      'tests/log.test.json': base('fetch-items', {
        mockEndpointResponses: [items(3)],
        theseLogsShouldHaveBeenSent: ['got 4 items'],
        logsShouldNotContain: ['got 3'],
      }),
      'tests/mock.test.json': base('fetch-items', {
        mockEndpointResponses: [
          { ...items(3), thisManyTimes: 2 },
          { whenThisIsCalled: 'http://mockserver/v1/never' },
        ],
      }),
      'tests/call.test.json': base('hello', {
        makeTheseCalls: [
          { url: 'http://localhost:11000/hello', expectedResponse: 'bye', expectedResponseCode: 201 },
        ],
      }),
    });
    expect(by('metric').failures.map((f) => f.kind)).toEqual(['metric-missing']);
    expect(
      by('log')
        .failures.map((f) => f.kind)
        .sort(),
    ).toEqual(['log-forbidden', 'log-missing']);
    expect(
      by('mock')
        .failures.map((f) => f.kind)
        .sort(),
    ).toEqual(['mock-call-count', 'mock-not-called']);
    expect(
      by('call')
        .failures.map((f) => f.kind)
        .sort(),
    ).toEqual(['call-body', 'call-status']);
  });

  it('S156: a call to a host that is not the mock is a refused connection, recorded; nothing is sent', async () => {
    const wf = JSON.parse(JSON.stringify(flow)) as typeof flow;
    (wf.workflows[0]!.steps[0]!.urlGenerator as { script: string }).script =
      "context.setUrl('elsewhere', '/x');";
    const { by } = await run({
      'tests/flow2.json': wf,
      'tests/out.test.json': base('fetch-items', { useThisTestConfigFile: 'flow2.json' }),
    });
    const r = by('out');
    // Issue 28: no httpConnectFailedProcessor here, so the refused connection is the step's run error.
    expect(r.status).toBe('passed');
    expect(r.errors.join('\n')).toContain('POLICY_CONNECT_FAILED');
    expect(r.mockCalls.map((c) => c.outcome)).toEqual(['not-mock']);
  });

  it('the host policy still decides first: a path outside the allowList never reaches the mock', async () => {
    const wf = JSON.parse(JSON.stringify(flow)) as typeof flow;
    (wf.workflows[0]!.steps[0]!.urlGenerator as { script: string }).script =
      "context.setUrl('api', '/v1/admin');";
    const { by } = await run({
      'tests/flow2.json': wf,
      'tests/p.test.json': base('fetch-items', {
        useThisTestConfigFile: 'flow2.json',
        mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/v1/admin' }],
      }),
    });
    const r = by('p');
    expect(r.mockCalls).toEqual([]);
    expect(r.errors.join('\n')).toMatch(/POLICY_|refused/);
  });

  it('persistence works in a private data directory that is removed after the run', async () => {
    const before = new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('oapp-test-')));
    const { by } = await run(
      {
        'tests/c.test.json': base('count', { theseMetricsShouldHaveBeenSent: [{ key: 'count', value: 1 }] }),
      },
      { iterations: 2 },
    );
    expect(by('c').status).toBe('passed');
    const after = readdirSync(tmpdir()).filter((n) => n.startsWith('oapp-test-') && !before.has(n));
    expect(after).toEqual([]);
  });

  // 2.0 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'stops waiting after secondsToWaitForCompletion and reports what was sent so far',
    { timeout: 10_000 },
    async () => {
      const { by } = await run({
        'tests/slow.test.json': base('slow', {
          secondsToWaitForCompletion: 1,
          theseMetricsShouldHaveBeenSent: [{ key: 'late', value: 1 }],
        }),
      });
      const r = by('slow');
      expect(r.status).toBe('failed');
      // Issue 27: a run past its wait fails as such first; the expectations it missed follow.
      expect(r.failures.map((f) => f.kind)).toEqual(['timeout', 'metric-missing']);
      expect(r.failures[0]?.message).toBe(
        'timed out: tests/slow.test.json did not finish within secondsToWaitForCompletion (1 s)',
      );
    },
  );

  it('a step the deployment does not have is a deploy failure naming it', async () => {
    const { by } = await run({ 'tests/none.test.json': base('no-such-step') });
    expect(
      by('none').failures.map((f) => [
        f.kind,
        f.message.includes('AGENT_STEP_NOT_FOUND') || f.message.includes('no step'),
      ]),
    ).toEqual([['deploy', true]]);
  });

  it('a workflow the runtime refuses is a deploy failure naming the cause', async () => {
    const wf = JSON.parse(JSON.stringify(flow)) as typeof flow;
    (wf.workflows[0]!.steps[1]!.trigger as { http: { server: string } }).http.server = 'not-declared';
    const { by } = await run({
      'tests/flow2.json': wf,
      'tests/bad.test.json': base('hello', { useThisTestConfigFile: 'flow2.json' }),
    });
    const r = by('bad');
    expect(r.failures.map((f) => f.kind)).toEqual(['deploy']);
    expect(r.failures[0]!.message).toContain('not-declared');
  });

  it('runs a testThisStep without an http trigger first, then sends makeTheseCalls', async () => {
    const seeded = {
      workflows: [
        {
          name: 'seeded',
          steps: [
            {
              stepId: 'seed',
              persistenceFile: 'shared.db',
              resultsProcessor: { script: "context.setPersistedItem('seeded', 'yes');" },
            },
            {
              stepId: 'read',
              persistenceFile: 'shared.db',
              trigger: { http: { server: 'web', path: '/read', method: 'GET' } },
              resultsProcessor: {
                script: "context.setBody('seeded=' + context.getPersistedItem('seeded'));",
              },
            },
          ],
        },
      ],
    };
    const call = { url: 'http://localhost:11000/read', expectedResponse: 'seeded=yes' };
    const { by } = await run({
      'tests/seeded.json': seeded,
      'tests/seed.test.json': base('seed', { useThisTestConfigFile: 'seeded.json', makeTheseCalls: [call] }),
      // The step with the http trigger is reached only through the calls: it never ran before them.
      'tests/read.test.json': base('read', {
        useThisTestConfigFile: 'seeded.json',
        makeTheseCalls: [{ ...call, expectedResponse: 'seeded=null' }],
      }),
    });
    expect(by('seed').failures).toEqual([]);
    expect(by('read').failures).toEqual([]);
  });

  // 2.0 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'sends no call when the step it waits for outlasts secondsToWaitForCompletion',
    { timeout: 10_000 },
    async () => {
      const { by } = await run({
        'tests/late.test.json': base('slow', {
          secondsToWaitForCompletion: 1,
          makeTheseCalls: [{ url: 'http://localhost:11000/hello' }],
        }),
      });
      const r = by('late');
      expect(r.failures.map((f) => [f.kind, f.actual])).toEqual([
        ['timeout', 'still running after 1 s; it was stopped'],
        ['call-failed', '(not made)'],
      ]);
    },
  );

  it('logs a sendToStep callee that errored while its caller ignored the result', async () => {
    const nested = {
      workflows: [
        {
          name: 'nested',
          steps: [
            {
              stepId: 'caller',
              resultsProcessor: { script: "context.sendToStep('callee', 'x'); console.log('caller done');" },
            },
            { stepId: 'callee', resultsProcessor: { script: "throw new Error('callee broke');" } },
          ],
        },
      ],
    };
    const { by } = await run({
      'tests/nested.json': nested,
      'tests/n.test.json': base('caller', {
        useThisTestConfigFile: 'nested.json',
        theseLogsShouldHaveBeenSent: ['caller done', 'sendToStep from "caller": step errored:'],
      }),
    });
    expect(by('n').failures).toEqual([]);
    expect(by('n').errors.join('\n')).toContain('step "callee": sendToStep from "caller": step errored:');
    expect(by('n').errors.join('\n')).toContain('callee broke');
  });

  describe('-2/ strings in restricted host data', () => {
    const packager = generateKeyPair('authenticated');
    const agent = generateKeyPair('authenticated');
    const keys = `${keyToHex(packager.publicKey!)}/${keyToHex(agent.secretKey)}`;
    const API_KEY = 'api-key-from-restricted-data-41f7';
    const sealed = encryptString(new TextEncoder().encode(API_KEY), agent.publicKey!, packager.secretKey);
    const authFlow = {
      workflows: [
        {
          name: 'auth',
          steps: [
            {
              stepId: 'fetch',
              authenticationProcessor: {
                script:
                  "var d = JSON.parse(context.getRestrictedDataFromHost('api')); " +
                  "context.setHeader('X-Api-Key', d.apiKey); console.log('using ' + d.apiKey);",
              },
              urlGenerator: { script: "context.setUrl('api', '/v1/items');" },
              resultsProcessor: { script: "console.log('status ' + context.getProperty('status_code'));" },
            },
          ],
        },
      ],
    };
    // A plain host (not authenticationHost): its data is restricted data all the same (ADR 0081).
    const authBoot = {
      allowExternalHostAccess: [{ id: 'api', host: 'http://mockserver', data: { apiKey: sealed } }],
    };
    const test = (variables: Record<string, string> | undefined) =>
      base('fetch', {
        useThisTestConfigFile: 'auth.json',
        useThisTestBootstrapFile: 'auth-boot.json',
        ...(variables === undefined ? {} : { variables }),
        mockEndpointResponses: [
          { ...items(1), expectedHeaders: { 'x-api-key': [API_KEY] }, thisManyTimes: 1 },
        ],
        theseLogsShouldHaveBeenSent: ['using <REDACTED>', 'status 200'],
        logsShouldNotContain: [API_KEY, keyToHex(agent.secretKey)],
      });
    const files = { 'tests/auth.json': authFlow, 'tests/auth-boot.json': authBoot };

    it('opens them with the keys in the test variables AGENT_STRING_SECRETKEYS or OPSCOTCH_STRING_SECRETKEYS', async () => {
      const { by } = await run({
        ...files,
        'tests/agent.test.json': test({ AGENT_STRING_SECRETKEYS: ` , ${keys} ` }),
        'tests/legacy.test.json': test({ OPSCOTCH_STRING_SECRETKEYS: keys }),
        'tests/none.test.json': test(undefined),
      });
      expect(by('agent').failures).toEqual([]);
      expect(by('legacy').failures).toEqual([]);
      expect(by('none').status).toBe('failed');
      expect(by('none').errors.join('\n')).toContain('AGENT_RESTRICTED_DATA_FAILED');
      // The key reached the mock (the call's header); it appears in no log line, error or failure.
      const shown = [by('agent'), by('legacy'), by('none')].map((r) => [r.logs, r.errors, r.failures]);
      expect(JSON.stringify(shown)).not.toContain(API_KEY);
    });

    it('a malformed key variable is a deploy failure naming the variable and the entry, never the value', async () => {
      const bad = `${keys},${keyToHex(packager.publicKey!)}/abc123`;
      const { by } = await run({ ...files, 'tests/bad.test.json': test({ AGENT_STRING_SECRETKEYS: bad }) });
      const r = by('bad');
      expect(r.failures.map((f) => f.kind)).toEqual(['deploy']);
      expect(r.failures[0]!.message).toContain('variable AGENT_STRING_SECRETKEYS: entry 2');
      expect(JSON.stringify(r)).not.toContain('abc123');
      expect(JSON.stringify(r)).not.toContain(keyToHex(agent.secretKey));
    });
  });

  it('leaves no data directory behind under a custom temp dir', async () => {
    const p = project({});
    cleanups.push(p.cleanup);
    const cfg = setup({ 'tests/ok.test.json': base('count') });
    await runTests(cfg, { deploy: createInProcessDeployer({ tempDir: p.root }) });
    expect(readdirSync(p.root)).toEqual([]);
  });
});
