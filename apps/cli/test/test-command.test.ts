import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { oapp, tempDir } from './helpers.js';

// `oapp test` end to end: the built command line runs workflow tests in process on the agent runtime.

const dir = tempDir();
const T0 = 1_700_000_000_000;

const write = (rel: string, v: unknown) => {
  mkdirSync(join(dir, rel, '..'), { recursive: true });
  writeFileSync(join(dir, rel), typeof v === 'string' ? v : JSON.stringify(v, null, 2));
};

const test = (step: string, extra: Record<string, unknown>) => ({
  fromDirectory: '',
  testThisStep: step,
  useThisTestConfigFile: 'flow.json',
  useThisTestBootstrapFile: 'boot.json',
  timestampOverride: T0,
  ...extra,
});

beforeAll(() => {
  write('resources/greet.js', "context.setBody('hi ' + context.getTimestamp());");
  write('tests/flow.json', {
    workflows: [
      {
        name: 'w',
        steps: [
          {
            stepId: 'greet',
            trigger: { http: { server: 'web', path: '/greet' } },
            resultsProcessor: { resource: 'greet.js' },
          },
          {
            stepId: 'poll',
            urlGenerator: { script: "context.setUrl('api', '/status');" },
            resultsProcessor: {
              script: "context.sendMetric('status', context.getProperty('status_code') === '200' ? 1 : 0);",
            },
          },
        ],
      },
    ],
  });
  write('tests/boot.json', {
    allowExternalHostAccess: [{ id: 'api', host: 'http://mockserver' }],
    allowHttpServerAccess: [{ id: 'web', port: 8080 }],
  });
  write(
    'tests/greet.test.json',
    test('greet', { makeTheseCalls: [{ url: 'http://localhost:8080/greet', expectedResponse: `hi ${T0}` }] }),
  );
  write(
    'tests/poll.test.json',
    test('poll', {
      mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/status', returnThisBody: 'ok' }],
      theseMetricsShouldHaveBeenSent: [{ key: 'status', value: 1 }],
    }),
  );
  write(
    'failing/poll-down.test.json',
    test('poll', {
      fromDirectory: '/../tests/',
      mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/status', returnThisStatusCode: 503 }],
      theseMetricsShouldHaveBeenSent: [{ key: 'status', value: 1 }],
    }),
  );
  write('testrunner.config.json', { resourceDirs: ['resources'], testDirs: ['tests'] });
  write('failing.config.json', {
    resourceDirs: ['resources'],
    testDirs: ['tests', 'failing'],
    license: 'x.lic',
    fileRoot: '.',
  });
});

describe('oapp test', () => {
  it('runs every test of ./testrunner.config.json: one line each, the summary line, exit 0', async () => {
    const r = await oapp(['test'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^✓ tests\/greet\.test\.json \(\d+ ms\)$/m);
    expect(r.out).toMatch(/^✓ tests\/poll\.test\.json \(\d+ ms\)$/m);
    expect(r.out.trimEnd().split('\n').at(-1)).toBe('2 passed, 0 failed, 0 skipped');
  });

  it('a failing test: exit 1, the diff with the mock call log, the legacy field said once', async () => {
    const r = await oapp(['test', 'failing.config.json'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.out).toContain('✗ failing/poll-down.test.json');
    expect(r.out).toContain('metric "status" was not sent as expected');
    expect(r.out).toMatch(/GET http:\/\/mockserver\/status → endpoint 0, 503/);
    expect(r.out).toMatch(/legacy field license/);
    expect(r.out.trimEnd().split('\n').at(-1)).toBe('2 passed, 1 failed, 0 skipped');
  });

  it('--reporter junit writes JUnit XML (to -o FILE), the summary line on stderr', async () => {
    const r = await oapp(['test', 'failing.config.json', '--reporter', 'junit', '-o', 'junit.xml'], {
      cwd: dir,
    });
    expect(r.code).toBe(1);
    const xml = readFileSync(join(dir, 'junit.xml'), 'utf8');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>/);
    expect(xml).toContain('tests="3" failures="1"');
    expect(xml).toContain('<failure');
    expect(r.stderr.trim()).toBe('2 passed, 1 failed, 0 skipped');
  });

  it('runs only the named test files; --json gives the results', async () => {
    const r = await oapp(['test', 'testrunner.config.json', 'tests/poll.test.json', '--json'], { cwd: dir });
    expect(r.code).toBe(0);
    const j = r.json();
    expect([j.ok, j.passed, j.failed, j.skipped]).toEqual([true, 1, 0, 0]);
    expect(j.results.map((x: { name: string }) => x.name)).toEqual(['tests/poll.test.json']);
  });

  it('a missing or invalid config, or a test outside the test directories: exit 2 with the code', async () => {
    const missing = await oapp(['test', 'nope.json'], { cwd: dir });
    expect([missing.code, missing.stderr.trim()]).toEqual([
      2,
      'oapp: CLI_FILE_UNREADABLE: nope.json: no such file (the test runner config)',
    ]);
    write('bad.config.json', { testDirs: ['tests'] });
    const bad = await oapp(['test', 'bad.config.json'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^oapp: TESTRUNNER_CONFIG_INVALID: /);
    const outside = await oapp(['test', 'testrunner.config.json', 'failing/poll-down.test.json'], {
      cwd: dir,
    });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/^oapp: TESTRUNNER_PATH_OUTSIDE_ROOT: /);
    const usage = await oapp(['test', '--concurrency', '0'], { cwd: dir });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^oapp: CLI_USAGE: /);
  });
});

describe('oapp test with the packager capability (ADR 0136)', () => {
  const pdir = tempDir();
  const put = (rel: string, v: unknown) => {
    mkdirSync(join(pdir, rel, '..'), { recursive: true });
    writeFileSync(join(pdir, rel), typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  };
  const hello = { workflows: [{ name: 'hello', steps: [{ stepId: 'hello' }] }] };

  beforeAll(() => {
    mkdirSync(join(pdir, 'ptests', 'res'), { recursive: true });
    const step = (stepId: string, operation: string, method: string) => ({
      stepId,
      trigger: { http: { server: 'api', path: `/${operation}`, method } },
      data: { packagerOperation: operation },
      resultsProcessor: { script: 'context.packager();' },
    });
    put('ptests/packager.json', {
      workflows: [
        {
          name: 'packager',
          steps: [step('health', 'health', 'GET'), step('hash', 'workflow-hash', 'POST')],
        },
      ],
    });
    put('ptests/boot.json', {
      allowPackagerAccess: true,
      allowHttpServerAccess: [{ id: 'api', port: 39575 }],
      allowFileAccess: [{ id: 'res', directoryOrFile: 'res', READ: true, LIST: true }],
      data: { resourceIds: ['res'] },
    });
    const t = (step: string, call: Record<string, unknown>) => ({
      fromDirectory: '',
      testThisStep: step,
      useThisTestConfigFile: 'packager.json',
      useThisTestBootstrapFile: 'boot.json',
      makeTheseCalls: [call],
    });
    put(
      'ptests/health.test.json',
      t('health', { url: 'http://localhost:39575/health', expectedResponse: '{"ok":true}' }),
    );
    put(
      'ptests/hash.test.json',
      t('hash', {
        url: 'http://localhost:39575/workflow-hash',
        method: 'POST',
        headers: [['Content-Type', 'application/json']],
        body: JSON.stringify(hello),
      }),
    );
    mkdirSync(join(pdir, 'resources'), { recursive: true });
    put('testrunner.config.json', { resourceDirs: ['resources'], testDirs: ['ptests'] });
  });

  it('runs a workflow whose bootstrap grants allowPackagerAccess: its steps answer as the packager does', async () => {
    const r = await oapp(['test', '--json'], { cwd: pdir });
    expect(r.stderr).toBe('');
    const j = r.json();
    expect([j.ok, j.passed, j.failed]).toEqual([true, 2, 0]);
  });
});
