import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseRunnerConfig, parseTestFile, TestRunnerError } from '../src/index.js';

const DIR = fileURLToPath(new URL('../testdata/shapes/', import.meta.url));
const read = (name: string) => readFileSync(DIR + name);

describe('test-file shapes seen in real suites (testdata/shapes)', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.test.json') && f !== 'delayed-mock.test.json');

  it.each(files)('parses %s', (name) => {
    expect(() => parseTestFile(read(name), name)).not.toThrow();
  });

  it('rejects an unknown member even beside legacy ones', () => {
    expect(() => parseTestFile(read('delayed-mock.test.json'), 'delayed-mock.test.json')).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_TEST_INVALID',
    );
  });

  it('reads skip flags, legacy names and values as the reference does', () => {
    expect(parseTestFile(read('string-flags.test.json'), 's').skip).toBe('ignore: true');
    expect(parseTestFile(read('empty-lists.test.json'), 'e').skip).toBe('enabled: false');
    const legacy = parseTestFile(read('legacy-route.test.json'), 'l');
    expect(legacy.testThisStep).toBe('list-accounts');
    expect(legacy.theseMetricsShouldHaveBeenSent[1]?.value).toBe(1 / 3);
    expect(
      parseTestFile(read('enabled-payloads.test.json'), 'p').mockEndpointResponses.map(
        (m) => m.returnThisStatusCode,
      ),
    ).toEqual([201, 202]);
    expect(parseTestFile(read('http-calls.test.json'), 'h').secondsToWaitForCompletion).toBe(100000);
  });

  it('parses the config with its tab indentation and legacy license', () => {
    const c = parseRunnerConfig(read('testrunner.config.json'), { projectRoot: '/p' });
    expect(c.legacy.map((l) => l.field)).toEqual(['license']);
  });
});
