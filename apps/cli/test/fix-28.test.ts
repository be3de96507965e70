import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { oapp, tempDir } from './helpers.js';

// Issue 28 §2, `oapp test` on a suite shaped like the reference's own (opscotch/opscotch-community, branch 3.1.0,
// tests/general/): what the command line says before the run, and that the reference's tests pass.

const dir = tempDir();

const write = (rel: string, v: unknown) => {
  mkdirSync(join(dir, rel, '..'), { recursive: true });
  writeFileSync(join(dir, rel), typeof v === 'string' ? v : JSON.stringify(v, null, 2));
};

/** One `oapp test` process: node start-up, the cli, the suite's runs on the agent runtime (2–4 s here, shared). */
const PROCESS_TEST_MS = 60_000;

beforeAll(() => {
  write('testrunner.config.json', { resourceDirs: ['resources'], testDirs: ['tests'] });
  write('resources/.keep', '');
  // httpFailed: a host nobody mocks, whose refused connection the workflow handles.
  write('tests/general/httpFailed.bootstrap.json', {
    hosts: { 'broken-server': { host: 'http://localhost:12345' } },
  });
  write('tests/general/httpFailed.config.json', {
    workflows: [
      {
        name: 'http failed',
        steps: [
          {
            stepId: 'httpfailed',
            urlGenerator: { script: "context.setUrl('broken-server', '/');" },
            httpConnectFailedProcessor: { script: "context.sendMetric('success', 1.0);" },
            resultsProcessor: { script: "context.sendMetric('success', 0.0);" },
            trigger: { timer: { period: 60000 } },
          },
        ],
      },
    ],
  });
  write('tests/general/httpFailed.test.json', {
    fromDirectory: '/general/',
    testThisStep: 'httpfailed',
    useThisTestConfigFile: 'httpFailed.config.json',
    useThisTestBootstrapFile: 'httpFailed.bootstrap.json',
    theseMetricsShouldHaveBeenSent: [{ key: 'success', value: 1 }],
  });
  // The reference's split-merge.testjson: a test by its content, not by its name.
  write('tests/general/split-merge.testjson', {
    fromDirectory: '/general/',
    testThisStep: 'splittest',
    useThisTestConfigFile: 'split-merge.config.json',
  });
});

/** The reference's readzipfile test: "set OPSCOTCH_COMMUNITY_ROOT on the agent"; here, on `oapp test`. */
function writeEnvTest(): void {
  write('tests/general/okfile.json', '{"status": "OK"}');
  write('tests/general/readfile.bootstrap.json', {
    allowFileAccess: [
      { id: 'okFile', directoryOrFile: '${OPSCOTCH_COMMUNITY_ROOT}/tests/general/okfile.json', READ: true },
    ],
  });
  write('tests/general/readfile.config.json', {
    workflows: [
      {
        name: 'read a file',
        steps: [
          {
            stepId: 'readfile',
            resultsProcessor: {
              script:
                "context.sendMetric('ok', JSON.parse(context.files('okFile').read('okfile.json')).status === 'OK' ? 1 : 0);",
            },
          },
        ],
      },
    ],
  });
  write('tests/general/readfile.test.json', {
    comment: 'THIS REQUIRES THE OPSCOTCH_COMMUNITY_ROOT ENVIRONMENT VARIABLE',
    fromDirectory: '/general/',
    testThisStep: 'readfile',
    useThisTestConfigFile: 'readfile.config.json',
    useThisTestBootstrapFile: 'readfile.bootstrap.json',
    theseMetricsShouldHaveBeenSent: [{ key: 'ok', value: 1 }],
  });
}

/**
 * The reference's textfilereading test: a step with a fileWatcher trigger on a file named through
 * `${OPSCOTCH_COMMUNITY_ROOT}`; each whole line of the file is one event.
 */
function writeWatchTest(): void {
  write('tests/general/lines.txt', 'first line\nsecond line\nno splitter yet');
  write('tests/general/watch.bootstrap.json', {
    allowFileAccess: [
      {
        id: 'testFile',
        directoryOrFile: '${OPSCOTCH_COMMUNITY_ROOT}/tests/general/lines.txt',
        patterns: ['.+\\.txt$'],
        READ: true,
      },
    ],
  });
  write('tests/general/watch.config.json', {
    workflows: [
      {
        name: 'watch a file',
        steps: [
          {
            stepId: 'fileReader',
            type: 'scripted',
            trigger: { fileWatcher: { bootstrapFileId: 'testFile', eventSplitter: '\\n' } },
            resultsProcessor: {
              script:
                "JSON.parse(context.getBody()).forEach(function (e) { console.log('got ' + e.message.trim()); });",
            },
          },
        ],
      },
    ],
  });
  write('tests/general/watch.test.json', {
    fromDirectory: '/general/',
    testThisStep: 'fileReader',
    useThisTestConfigFile: 'watch.config.json',
    useThisTestBootstrapFile: 'watch.bootstrap.json',
    theseLogsShouldHaveBeenSent: ['got first line', 'got second line'],
    logsShouldNotContain: ['no splitter yet'],
  });
}

describe('oapp test (issue 28)', () => {
  it(
    'warns of a misnamed test and once per unmocked host, reads ${NAME} from its environment, runs watched steps',
    async () => {
      writeEnvTest();
      writeWatchTest();
      const r = await oapp(['test'], { cwd: dir, env: { OPSCOTCH_COMMUNITY_ROOT: dir } });
      expect(r.stderr.split('\n').filter((l) => l !== '')).toEqual([
        'oapp: warning: "tests/general/split-merge.testjson" looks like a test (it has "testThisStep") but will ' +
          'not run: only files named *.test.json run',
        'oapp: warning: host "broken-server" (http://localhost:12345) is not mocked: calls to it are answered as ' +
          'a refused connection, nothing is sent (tests/general/httpFailed.test.json)',
      ]);
      expect(r.out).toMatch(/^✓ tests\/general\/httpFailed\.test\.json \(\d+ ms\)$/m);
      expect(r.out).toMatch(/^✓ tests\/general\/readfile\.test\.json \(\d+ ms\)$/m);
      expect(r.out).toMatch(/^✓ tests\/general\/watch\.test\.json \(\d+ ms\)$/m);
      expect(r.code).toBe(0);
      // Without the variable, the test fails naming it, as the agent would refuse the bootstrap.
      const without = await oapp(['test', '--json'], { cwd: dir });
      expect(without.code).toBe(1);
      const failed = (
        without.json() as { results: { name: string; failures: { message: string }[] }[] }
      ).results
        .filter((x) => x.failures.length > 0)
        .map((x) => [x.name, x.failures[0]?.message]);
      expect(failed.map(([name]) => name)).toEqual([
        'tests/general/readfile.test.json',
        'tests/general/watch.test.json',
      ]);
      expect(failed.slice(0, 1)).toEqual([
        [
          'tests/general/readfile.test.json',
          expect.stringContaining(
            'bootstrap variable OPSCOTCH_COMMUNITY_ROOT (at /0/allowFileAccess/0/directoryOrFile) is not set',
          ),
        ],
      ]);
    },
    PROCESS_TEST_MS,
  );
});
