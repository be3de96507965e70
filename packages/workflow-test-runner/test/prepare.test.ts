import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestRunnerError, testDeploymentId, type RunnerConfig } from '../src/index.js';
import { discoverTests, loadTest, prepareTest } from '../src/internal.js';
import { config, project, workflow } from './fixtures.js';

let cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.forEach((c) => c());
  cleanups = [];
});

function setup(
  files: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): { root: string; cfg: RunnerConfig } {
  const p = project({ 'resources/.keep': '', ...files });
  cleanups.push(p.cleanup);
  return { root: p.root, cfg: config(p.root, extra) };
}

async function prepare(cfg: RunnerConfig, name: string) {
  const test = discoverTests(cfg).find((t) => t.name === name);
  if (test === undefined) throw new Error(`no test ${name}`);
  return prepareTest(cfg, loadTest(cfg, test));
}

const base = {
  fromDirectory: '/billing/',
  testThisStep: 'probe',
  useThisTestConfigFile: 'billing.workflow.json',
};

describe('prepareTest: paths', () => {
  it('resolves files relative to fromDirectory, or from the test root with a leading slash', async () => {
    const { cfg } = setup({
      'tests/billing/billing.workflow.json': workflow(),
      'tests/billing/a.response.txt': 'not json {',
      'tests/common/b.response.json': '{"b":1}',
      'tests/billing/a.test.json': {
        ...base,
        mockEndpointResponses: [
          { whenThisIsCalled: 'http://mockserver/a', returnThisFile: 'a.response.txt' },
          { whenThisIsCalled: 'http://mockserver/b', returnThisFile: '/common/b.response.json' },
          { whenThisIsCalled: 'http://mockserver/c', returnThisFile: '../common/b.response.json' },
        ],
      },
    });
    const t = await prepare(cfg, 'tests/billing/a.test.json');
    expect(new TextDecoder().decode(t.endpoints[0]?.body)).toBe('not json {');
    expect(new TextDecoder().decode(t.endpoints[1]?.body)).toBe('{"b":1}');
    expect(new TextDecoder().decode(t.endpoints[2]?.body)).toBe('{"b":1}');
  });

  it('reads fromDirectory "" as the directory holding the test, and "a/b" like "/a/b/"', async () => {
    const { cfg } = setup({
      'tests/x/y/flow.json': workflow(),
      'tests/x/y/empty.test.json': {
        fromDirectory: '',
        testThisStep: 'probe',
        useThisTestConfigFile: 'flow.json',
      },
      'tests/x/y/plain.test.json': {
        fromDirectory: 'x/y',
        testThisStep: 'probe',
        useThisTestConfigFile: 'flow.json',
      },
    });
    await expect(prepare(cfg, 'tests/x/y/empty.test.json')).resolves.toMatchObject({ stepId: 'probe' });
    await expect(prepare(cfg, 'tests/x/y/plain.test.json')).resolves.toMatchObject({ stepId: 'probe' });
  });

  it.each([
    [
      'returnThisFile with ..',
      {
        ...base,
        mockEndpointResponses: [
          { whenThisIsCalled: 'http://mockserver/a', returnThisFile: '../../secret.txt' },
        ],
      },
    ],
    ['useThisTestConfigFile with ..', { ...base, useThisTestConfigFile: '../../flows/outside.json' }],
    ['useThisTestBootstrapFile with ..', { ...base, useThisTestBootstrapFile: '/../secret.txt' }],
    ['fromDirectory with ..', { ...base, fromDirectory: '../' }],
  ])(
    'S155: refuses %s leading out of the test directory with TESTRUNNER_PATH_OUTSIDE_ROOT',
    async (_n, doc) => {
      const { cfg } = setup({
        'secret.txt': 'top secret',
        'flows/outside.json': workflow(),
        'tests/billing/billing.workflow.json': workflow(),
        'tests/billing/t.test.json': doc,
      });
      await expect(prepare(cfg, 'tests/billing/t.test.json')).rejects.toThrowCode(
        TestRunnerError,
        'TESTRUNNER_PATH_OUTSIDE_ROOT',
      );
    },
  );

  it('S155: refuses a returnThisFile that is a symbolic link out of the test directory', async () => {
    const { root, cfg } = setup({
      'secret.txt': 'top secret',
      'tests/billing/billing.workflow.json': workflow(),
      'tests/billing/t.test.json': {
        ...base,
        mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/a', returnThisFile: 'link.json' }],
      },
    });
    symlinkSync(join(root, 'secret.txt'), join(root, 'tests/billing/link.json'));
    await expect(prepare(cfg, 'tests/billing/t.test.json')).rejects.toThrowCode(
      TestRunnerError,
      'TESTRUNNER_PATH_OUTSIDE_ROOT',
    );
  });

  it('S155: refuses a workflow file reached through a linked directory that leads out', async () => {
    const { root, cfg } = setup({
      'elsewhere/billing.workflow.json': workflow(),
      'tests/billing/t.test.json': { ...base, useThisTestConfigFile: 'linked/billing.workflow.json' },
    });
    symlinkSync(join(root, 'elsewhere'), join(root, 'tests/billing/linked'));
    await expect(prepare(cfg, 'tests/billing/t.test.json')).rejects.toThrowCode(
      TestRunnerError,
      'TESTRUNNER_PATH_OUTSIDE_ROOT',
    );
  });

  it('S155: an absolute file-system path is read from the test root, never from the file system root', async () => {
    const { cfg } = setup({
      'tests/billing/billing.workflow.json': workflow(),
      'tests/billing/t.test.json': { ...base, useThisTestBootstrapFile: '/etc/passwd' },
    });
    await expect(prepare(cfg, 'tests/billing/t.test.json')).rejects.toThrowCode(
      TestRunnerError,
      'TESTRUNNER_FILE_NOT_FOUND',
    );
  });

  it('S155: a linked test file leading out of the test directory is refused', () => {
    const { root, cfg } = setup({ 'outside.test.json': { ...base }, 'tests/.keep': '' });
    symlinkSync(join(root, 'outside.test.json'), join(root, 'tests/in.test.json'));
    const [test] = discoverTests(cfg);
    expect(() => loadTest(cfg, test!)).toThrowCode(TestRunnerError, 'TESTRUNNER_PATH_OUTSIDE_ROOT');
  });

  it('allows files beside the tests only when the config widens the root with fileRoot', async () => {
    const files = {
      'apps/billing/flow.json': workflow(),
      'tests/billing/t.test.json': {
        fromDirectory: '/billing/',
        testThisStep: 'probe',
        useThisTestConfigFile: '../../apps/billing/flow.json',
      },
    };
    const strict = setup(files);
    await expect(prepare(strict.cfg, 'tests/billing/t.test.json')).rejects.toThrowCode(
      TestRunnerError,
      'TESTRUNNER_PATH_OUTSIDE_ROOT',
    );
    const wide = setup(files, { fileRoot: '.' });
    await expect(prepare(wide.cfg, 'tests/billing/t.test.json')).resolves.toMatchObject({ stepId: 'probe' });
  });

  it('refuses backslashes and NUL with TESTRUNNER_PATH_INVALID', async () => {
    const { cfg } = setup({
      'tests/billing/billing.workflow.json': workflow(),
      'tests/billing/t.test.json': { ...base, useThisTestBootstrapFile: '..\\x' },
    });
    await expect(prepare(cfg, 'tests/billing/t.test.json')).rejects.toThrowCode(
      TestRunnerError,
      'TESTRUNNER_PATH_INVALID',
    );
  });

  it('reports a missing file with TESTRUNNER_FILE_NOT_FOUND and a directory as not a regular file', async () => {
    const { cfg } = setup({
      'tests/billing/billing.workflow.json': workflow(),
      'tests/billing/dir/.keep': '',
      'tests/billing/a.test.json': { ...base, useThisTestBootstrapFile: 'missing.json' },
      'tests/billing/b.test.json': { ...base, useThisTestBootstrapFile: 'dir' },
    });
    await expect(prepare(cfg, 'tests/billing/a.test.json')).rejects.toThrowCode(
      TestRunnerError,
      'TESTRUNNER_FILE_NOT_FOUND',
    );
    await expect(prepare(cfg, 'tests/billing/b.test.json')).rejects.toThrowCode(
      TestRunnerError,
      'TESTRUNNER_FILE_NOT_FOUND',
    );
  });
});

describe('prepareTest: workflow', () => {
  it('compiles the workflow with the config resource directories (resources inlined)', async () => {
    const { cfg } = setup({
      'resources/billing/probe.js': 'context.sendMetric("probe", 1);',
      'tests/billing/billing.workflow.json': workflow('probe', { resource: 'billing/probe.js' }),
      'tests/billing/t.test.json': base,
    });
    const t = await prepare(cfg, 'tests/billing/t.test.json');
    expect(t.workflow.workflows[0]?.steps[0]?.resultsProcessor).toMatchObject({
      script: 'context.sendMetric("probe", 1);',
      resourceName: '/billing/probe.js',
    });
  });

  it('applies manifest customizations to the test workflow', async () => {
    const { cfg } = setup({
      'tests/billing/billing.workflow.json': workflow(),
      'tests/billing/t.test.json': {
        ...base,
        testThisStep: 'added',
        manifest: {
          customizations: [
            {
              op: 'add',
              sourcePath: '$.workflows[0].steps[1]',
              sourceValue: { stepId: 'added', resultsProcessor: { script: 'x();' } },
            },
          ],
        },
      },
    });
    const t = await prepare(cfg, 'tests/billing/t.test.json');
    expect(t.workflow.workflows[0]?.steps.map((s) => s.stepId)).toEqual(['probe', 'added']);
  });

  it('builds from manifest includes relative to fromDirectory', async () => {
    const { cfg } = setup({
      'tests/billing/one.json': workflow('one'),
      'tests/billing/two.json': workflow('two'),
      'tests/billing/t.test.json': {
        fromDirectory: '/billing/',
        testThisStep: 'two',
        manifest: { includes: [{ sourceWorkflow: 'one.json' }, { sourceWorkflow: 'two.json' }] },
      },
    });
    const t = await prepare(cfg, 'tests/billing/t.test.json');
    expect(t.workflow.workflows.map((w) => w.steps[0]?.stepId)).toEqual(['one', 'two']);
  });

  it('wraps compiler errors in TESTRUNNER_WORKFLOW_INVALID keeping the compiler code', async () => {
    const { cfg } = setup({
      'tests/billing/billing.workflow.json': workflow('probe', { resource: 'missing.js' }),
      'tests/billing/t.test.json': base,
    });
    const err = await prepare(cfg, 'tests/billing/t.test.json').catch((e: unknown) => e as TestRunnerError);
    expect(err).toMatchObject({
      code: 'TESTRUNNER_WORKFLOW_INVALID',
      details: { workflowCode: 'WORKFLOW_RESOURCE_NOT_FOUND' },
    });
  });
});

describe('prepareTest: bootstrap and run settings', () => {
  it('completes the partial bootstrap and carries clock, wait, variables and calls', async () => {
    const { cfg } = setup(
      {
        'tests/billing/billing.workflow.json': workflow(),
        'tests/billing/b.json': {
          hosts: { ledger: { host: 'http://mockserver', allowlist: [['GET', '/v1/.*']] } },
          allowExternalHostAccess: [{ id: 'real', host: 'https://ledger.example.com' }],
        },
        'tests/billing/t.test.json': {
          ...base,
          useThisTestBootstrapFile: 'b.json',
          timestampOverride: 1700000000000,
          secondsToWaitForCompletion: 3,
          variables: { B: 'test' },
          makeTheseCalls: [{ url: 'http://localhost:8080/x' }],
        },
      },
      { variables: { A: 'config', B: 'config' }, debug: true },
    );
    const t = await prepare(cfg, 'tests/billing/t.test.json');
    expect(t.deploymentId).toBe('test-tests-billing-t');
    expect(t.bootstrap.allowExternalHostAccess?.map((h) => h.id)).toEqual(['real', 'ledger']);
    expect(t.unmockedHosts).toEqual(['real']);
    expect(t).toMatchObject({
      timestampOverride: 1700000000000,
      waitSeconds: 3,
      variables: { A: 'config', B: 'test' },
      debug: true,
    });
    expect(t.calls).toHaveLength(1);
  });

  it('derives a safe deployment id from the test name', () => {
    expect(testDeploymentId('tests/a b/<x>.test.json')).toBe('test-tests-a-b-x');
    expect(testDeploymentId('.test.json')).toBe('test-unnamed');
  });
});
