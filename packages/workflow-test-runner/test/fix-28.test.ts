import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessDeployer, runTests, type RunWarning, type TestResult } from '../src/index.js';
import { config, project } from './fixtures.js';

// Issue 28 §2: the test runner behaves as the reference's does with the reference's own tests
// (opscotch/opscotch-community, branch 3.1.0, tests/general/): an unmocked host is a refused connection
// (httpFailed.test.json), `${VAR}` in a test bootstrap comes from the environment (readzipfile.test.json,
// textfilereading.test.json: "set OPSCOTCH_COMMUNITY_ROOT on the agent"), a step with a fileWatcher trigger is
// driven by its files (textfilereading.test.json), and a test-like file with the wrong suffix is reported
// (split-merge.testjson, auth-proc-direct-test.json).

let cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.forEach((c) => c());
  cleanups = [];
});

function setup(files: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const p = project({ 'resources/.keep': '', ...files });
  cleanups.push(p.cleanup);
  return { root: p.root, cfg: config(p.root, extra) };
}

/**
 * Each run below goes through the real runtime (workflow compiled, deployed, sandboxed): about 0.1–0.3 s here
 * (2 cores, shared) once the sandbox worker is warm, several times that when the machine is busy.
 */
const IN_PROCESS_TEST_MS = 15_000;

const test = (stepId: string, extra: Record<string, unknown> = {}) => ({
  fromDirectory: '',
  testThisStep: stepId,
  useThisTestConfigFile: 'flow.json',
  useThisTestBootstrapFile: 'boot.json',
  ...extra,
});

// The first run in a process starts a sandbox worker (≈ 0.8 s): started once, so each test below measures itself.
beforeAll(async () => {
  const { cfg } = setup({
    'tests/flow.json': {
      workflows: [{ name: 'w', steps: [{ stepId: 's', resultsProcessor: { script: '' } }] }],
    },
    'tests/boot.json': {},
    'tests/warm.test.json': test('s'),
  });
  await runTests(cfg, { deploy: createInProcessDeployer() });
}, IN_PROCESS_TEST_MS);

/** A step that calls `broken-server` and says by a metric which processor ran (the reference's httpFailed test). */
const httpFailedFlow = {
  workflows: [
    {
      name: 'http failed',
      steps: [
        {
          stepId: 'httpfailed',
          urlGenerator: { script: "context.setUrl('broken-server', '/');" },
          httpConnectFailedProcessor: {
            script:
              "context.sendMetric('success', 1.0); console.log('why ' + context.getProperty('http.error'));",
          },
          resultsProcessor: { script: "context.sendMetric('success', 0.0);" },
          trigger: { timer: { period: 60000 } },
        },
      ],
    },
  ],
};

describe('an unmocked host (issue 28 §2.1)', () => {
  it(
    'is a refused connection: httpConnectFailedProcessor runs, the test passes, and the host is never contacted',
    async () => {
      let hits = 0;
      const server = createServer((_req, res) => {
        hits++;
        res.end('contacted');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => server.close());
      const { port } = server.address() as AddressInfo;
      const { cfg } = setup({
        'tests/flow.json': httpFailedFlow,
        // The reference's legacy `hosts` map, as in its test.
        'tests/boot.json': { hosts: { 'broken-server': { host: `http://localhost:${port}` } } },
        'tests/httpFailed.test.json': test('httpfailed', {
          mockEndpointResponses: [],
          theseMetricsShouldHaveBeenSent: [{ key: 'success', value: 1 }],
          theseLogsShouldHaveBeenSent: ['why POLICY_CONNECT_FAILED'],
        }),
      });
      const summary = await runTests(cfg, { deploy: createInProcessDeployer() });
      const r = summary.results[0] as TestResult;
      expect(r.failures).toEqual([]);
      expect(r.status).toBe('passed');
      expect(r.mockCalls.map((c) => [c.outcome, c.url, c.status])).toEqual([
        ['not-mock', `http://localhost:${port}/`, undefined],
      ]);
      expect(hits).toBe(0);
    },
    IN_PROCESS_TEST_MS,
  );

  it('is named before the run: one warning per host, with the tests that use it', async () => {
    const { cfg } = setup({
      'tests/flow.json': httpFailedFlow,
      'tests/boot.json': {
        allowExternalHostAccess: [
          { id: 'broken-server', host: 'http://localhost:12345/base' },
          { id: 'api', host: 'http://mockserver' },
          { id: 'vault', host: 'https://vault.example.com:8200/v1' },
        ],
      },
      'tests/a.test.json': test('httpfailed'),
      'tests/b.test.json': test('httpfailed'),
    });
    const events: string[] = [];
    const warnings: RunWarning[] = [];
    const summary = await runTests(cfg, {
      deploy: () => Promise.resolve({ metrics: [], logs: [], calls: [], completed: true }),
      onWarning: (w) => {
        warnings.push(w);
        events.push(`warning ${w.kind}`);
      },
      onResult: (r) => events.push(`result ${r.name}`),
    });
    expect(events).toEqual([
      'warning unmocked-host',
      'warning unmocked-host',
      'result tests/a.test.json',
      'result tests/b.test.json',
    ]);
    expect(warnings).toEqual([
      {
        kind: 'unmocked-host',
        hostId: 'broken-server',
        origin: 'http://localhost:12345',
        tests: ['tests/a.test.json', 'tests/b.test.json'],
      },
      {
        kind: 'unmocked-host',
        hostId: 'vault',
        origin: 'https://vault.example.com:8200',
        tests: ['tests/a.test.json', 'tests/b.test.json'],
      },
    ]);
    expect(summary.warnings).toEqual(warnings);
  });
});

describe('${VAR} in a test bootstrap (issue 28 §2.2)', () => {
  /** The reference's readzipfile test: "set OPSCOTCH_COMMUNITY_ROOT on the agent". */
  const files = (boot: Record<string, unknown>) => ({
    'tests/flow.json': {
      workflows: [{ name: 'w', steps: [{ stepId: 's', resultsProcessor: { script: '' } }] }],
    },
    'tests/boot.json': boot,
    'tests/a.test.json': test('s'),
  });
  const zipAccess = {
    allowFileAccess: [
      { id: 'zipFile', directoryOrFile: '${OPSCOTCH_COMMUNITY_ROOT}/tests/general/file.zip', READ: true },
    ],
  };

  /** Runs the suite with a deployer that only keeps what it was given. */
  async function prepared(cfg: ReturnType<typeof config>, environment?: Record<string, string | undefined>) {
    const seen: Record<string, unknown>[] = [];
    const summary = await runTests(cfg, {
      deploy: ({ test: t }) => {
        seen.push(t.bootstrap);
        return Promise.resolve({ metrics: [], logs: [], calls: [], completed: true });
      },
      ...(environment === undefined ? {} : { environment }),
    });
    return { seen, result: summary.results[0] as TestResult };
  }

  it('comes from the environment, as on the agent', async () => {
    const { cfg } = setup(files(zipAccess));
    const { seen, result } = await prepared(cfg, { OPSCOTCH_COMMUNITY_ROOT: '/srv/community', PATH: '/bin' });
    expect(result.failures).toEqual([]);
    expect(seen[0]?.['allowFileAccess']).toEqual([
      { id: 'zipFile', directoryOrFile: '/srv/community/tests/general/file.zip', READ: true },
    ]);
  });

  it('config variables win over the environment, and the test’s own over both', async () => {
    const boot = { data: { a: '${A}', b: '${B}', c: '${C}' } };
    const { cfg } = setup(
      { ...files(boot), 'tests/a.test.json': test('s', { variables: { C: 'test' } }) },
      { variables: { B: 'config', C: 'config' } },
    );
    const { seen } = await prepared(cfg, { A: 'env', B: 'env', C: 'env' });
    expect(seen[0]?.['data']).toEqual({ a: 'env', b: 'config', c: 'test' });
  });

  it('a variable set nowhere fails the test naming it, as the agent refuses the bootstrap', async () => {
    const { cfg } = setup(files(zipAccess));
    const { result } = await prepared(cfg, {});
    expect(result.status).toBe('failed');
    expect(result.failures[0]?.kind).toBe('prepare');
    expect(result.failures[0]?.message).toContain(
      'bootstrap variable OPSCOTCH_COMMUNITY_ROOT (at /0/allowFileAccess/0/directoryOrFile) is not set',
    );
  });

  it('the agent’s key variables may never be used, from the environment or the config', async () => {
    for (const name of [
      'AGENT_STRING_SECRETKEYS',
      'AGENT_BOOTSTRAP_SECRETKEY',
      'AGENT_BOOTSTRAP_PRIVATEKEY',
    ]) {
      const { cfg } = setup(files({ data: { k: `\${${name}}` } }), { variables: { [name]: 'from-config' } });
      const { seen, result } = await prepared(cfg, { [name]: 'from-env' });
      expect(seen).toEqual([]);
      expect(result.failures[0]?.message).toContain(`variable ${name} may not be used in a bootstrap`);
      expect(result.failures[0]?.message).not.toMatch(/from-(env|config)/);
    }
  });
});

describe('test discovery (issue 28 §2.4)', () => {
  const quiet = () => Promise.resolve({ metrics: [], logs: [], calls: [], completed: true });
  const aTest = test('s');

  it('reports each file in the test directories that looks like a test but will not run (its suffix)', async () => {
    const { cfg } = setup({
      'tests/flow.json': {
        workflows: [{ name: 'w', steps: [{ stepId: 's', resultsProcessor: { script: '' } }] }],
      },
      'tests/boot.json': {},
      'tests/general/a.test.json': aTest,
      // The reference's own: tests/general/split-merge.testjson, tests/general/authentication/auth-proc-direct-test.json,
      // tests/slack/slackSendMessage.test.invalid.json (branch 3.1.0).
      'tests/general/split-merge.testjson': aTest,
      'tests/general/authentication/auth-proc-direct-test.json': { ...aTest, fromDirectory: '/' },
      'tests/slack/slackSendMessage.test.invalid.json': aTest,
      'tests/legacy/old.Test.JSON': {
        fromDirectory: '',
        testThisRoute: 'r',
        useThisTestConfigFile: 'x.json',
      },
      // Not tests: a bootstrap and a workflow named like tests, a response that mentions the field in its text.
      'tests/general/testrunner-http-tests.bootstrap.json': {},
      'tests/general/testrunner-http-tests.config.json': { workflows: [] },
      'tests/general/notes.response.txt': 'the field "testThisStep" names the step',
    });
    const warnings: RunWarning[] = [];
    const summary = await runTests(cfg, { deploy: quiet, onWarning: (w) => warnings.push(w) });
    expect(summary.results.map((r) => r.name)).toEqual(['tests/general/a.test.json']);
    expect(warnings).toEqual([
      {
        kind: 'misnamed-test',
        file: 'tests/general/authentication/auth-proc-direct-test.json',
        field: 'testThisStep',
      },
      { kind: 'misnamed-test', file: 'tests/general/split-merge.testjson', field: 'testThisStep' },
      { kind: 'misnamed-test', file: 'tests/legacy/old.Test.JSON', field: 'testThisRoute' },
      {
        kind: 'misnamed-test',
        file: 'tests/slack/slackSendMessage.test.invalid.json',
        field: 'testThisStep',
      },
    ]);
    expect(summary.warnings).toEqual(warnings);
  });

  it('says nothing of other files when the tests to run are named', async () => {
    const { cfg } = setup({
      'tests/flow.json': {
        workflows: [{ name: 'w', steps: [{ stepId: 's', resultsProcessor: { script: '' } }] }],
      },
      'tests/boot.json': {},
      'tests/a.test.json': aTest,
      'tests/b.testjson': aTest,
    });
    const summary = await runTests(cfg, { deploy: quiet, tests: ['tests/a.test.json'] });
    expect(summary.warnings).toEqual([]);
  });
});

describe('a step with a fileWatcher trigger (issue 28 §2.3)', () => {
  /** The reference's textfilereading test: the step logs each event of the file its trigger watches. */
  const watchFlow = {
    workflows: [
      {
        name: 'file reading',
        steps: [
          {
            stepId: 'reader',
            trigger: { fileWatcher: { bootstrapFileId: 'lines', eventSplitter: '\\n' } },
            resultsProcessor: {
              script:
                "JSON.parse(context.getBody()).forEach(function (e) { console.log('event ' + e.message.trim()); });",
            },
          },
          {
            stepId: 'drop',
            trigger: { http: { server: 'web', path: '/drop', method: 'POST' } },
            resultsProcessor: {
              script:
                "context.files('inbox').write('new.txt', context.getBody()); context.setBody('dropped');",
            },
          },
          {
            stepId: 'inbox-reader',
            trigger: { fileWatcher: { bootstrapFileId: 'inbox', eventSplitter: '\\n' } },
            resultsProcessor: {
              script: "context.sendMetric('events', JSON.parse(context.getBody()).length);",
            },
          },
        ],
      },
    ],
  };
  const watchBoot = {
    allowFileAccess: [
      { id: 'lines', directoryOrFile: 'general/lines.txt', READ: true },
      { id: 'inbox', directoryOrFile: 'inbox', patterns: ['.+\\.txt'], READ: true, WRITE: true },
    ],
    allowHttpServerAccess: [{ id: 'web', port: 11028 }],
  };

  it(
    'is driven by its file: each event runs it, as on the agent (it is not run once with no body)',
    async () => {
      const { cfg } = setup({
        'tests/flow.json': watchFlow,
        'tests/boot.json': watchBoot,
        // Three whole lines; the fourth has no splitter yet, so it waits (agent README "fileWatcher").
        'tests/general/lines.txt': 'alpha 1\nbeta 2\ngamma 3\ndelta 4',
        'tests/inbox/.keep': '',
        'tests/read.test.json': test('reader', {
          theseLogsShouldHaveBeenSent: ['event alpha 1', 'event beta 2', 'event gamma 3'],
          logsShouldNotContain: ['event delta 4', 'step errored'],
        }),
      });
      const summary = await runTests(cfg, { deploy: createInProcessDeployer() });
      const r = summary.results[0] as TestResult;
      expect(r.failures).toEqual([]);
      expect(r.errors).toEqual([]);
    },
    IN_PROCESS_TEST_MS,
  );

  it(
    'sees the files the test’s calls write: the calls go out once its first check is done',
    async () => {
      const { cfg } = setup({
        'tests/flow.json': watchFlow,
        'tests/boot.json': watchBoot,
        'tests/general/lines.txt': '',
        'tests/inbox/old.txt': 'old 1\nold 2\n',
        'tests/drop.test.json': test('inbox-reader', {
          makeTheseCalls: [
            {
              url: 'http://localhost:11028/drop',
              method: 'POST',
              body: 'new 1\n',
              expectedResponse: 'dropped',
            },
          ],
          theseMetricsShouldHaveBeenSent: [
            { key: 'events', value: 2 },
            { key: 'events', value: 1 },
          ],
        }),
      });
      const summary = await runTests(cfg, { deploy: createInProcessDeployer() });
      const r = summary.results[0] as TestResult;
      expect(r.failures).toEqual([]);
      expect(r.errors).toEqual([]);
    },
    IN_PROCESS_TEST_MS,
  );
});
