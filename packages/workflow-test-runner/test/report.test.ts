import { describe, expect, it } from 'vitest';
import {
  formatFailureDetails,
  formatJunitReport,
  formatLegacyNotices,
  formatResultLine,
  formatRunWarning,
  formatSummaryLine,
  formatTextReport,
  type RunSummary,
  type TestResult,
} from '../src/index.js';
import { escapeXml } from '../src/internal.js';

const result = (over: Partial<TestResult>): TestResult => ({
  name: 'tests/a.test.json',
  iteration: 1,
  status: 'passed',
  durationMs: 12.4,
  failures: [],
  mockCalls: [],
  errors: [],
  logs: [],
  ...over,
});

const failedResult = result({
  name: 'tests/<weird> & "quoted".test.json',
  status: 'failed',
  durationMs: 40,
  failures: [
    {
      kind: 'log-missing',
      message: 'a log line was not written',
      expected: '"take:5000"',
      actual: 'take:4999',
    },
  ],
  errors: ['step probe: boom'],
  mockCalls: [
    {
      seq: 0,
      url: 'http://mockserver/a',
      method: 'GET',
      headers: {},
      body: new Uint8Array(0),
      outcome: 'unmatched',
      endpoint: null,
      status: 404,
      reasons: [],
    },
  ],
});

const summary: RunSummary = {
  results: [
    result({}),
    failedResult,
    result({ name: 'tests/c.test.json', status: 'skipped', skipReason: 'ignore: true' }),
  ],
  passed: 1,
  failed: 1,
  skipped: 1,
  legacy: [
    {
      field: 'license',
      message: 'ignored: the runner needs no licence file',
      files: ['testrunner.config.json'],
    },
  ],
  warnings: [],
};

describe('text report', () => {
  it('writes one line per test with a mark, name and duration', () => {
    expect(formatResultLine(result({}))).toBe('✓ tests/a.test.json (12 ms)');
    expect(formatResultLine(failedResult)).toBe('✗ tests/<weird> & "quoted".test.json (40 ms)');
    expect(formatResultLine(result({ status: 'skipped', skipReason: 'ignore: true' }))).toBe(
      '- tests/a.test.json (skipped: ignore: true)',
    );
    expect(formatResultLine(result({ iteration: 2 }), 3)).toBe('✓ tests/a.test.json #2 (12 ms)');
  });

  it('writes a diff for a failure: expected, actual, run errors and the mock call log', () => {
    expect(formatFailureDetails(failedResult)).toBe(
      [
        '  1) a log line was not written',
        '     expected:',
        '       "take:5000"',
        '     actual:',
        '       take:4999',
        '  run errors:',
        '    step probe: boom',
        '  mock calls:',
        '    #0 GET http://mockserver/a → unmatched, 404',
      ].join('\n'),
    );
    expect(formatFailureDetails(result({}))).toBe('');
  });

  it('closes with N passed, N failed, N skipped after the legacy notices', () => {
    expect(formatSummaryLine(summary)).toBe('1 passed, 1 failed, 1 skipped');
    expect(formatLegacyNotices(summary.legacy)).toEqual([
      'legacy field license (testrunner.config.json): ignored: the runner needs no licence file',
    ]);
    const text = formatTextReport(summary);
    expect(text.trimEnd().split('\n').at(-1)).toBe('1 passed, 1 failed, 1 skipped');
    expect(text).toContain('legacy field license');
  });
});

describe('formatRunWarning', () => {
  it('names an unmocked host once, with its origin and up to three tests (issue 28)', () => {
    const w = {
      kind: 'unmocked-host' as const,
      hostId: 'broken-server',
      origin: 'http://localhost:12345',
      tests: ['tests/a.test.json'],
    };
    expect(formatRunWarning(w)).toBe(
      'host "broken-server" (http://localhost:12345) is not mocked: calls to it are answered as a refused ' +
        'connection, nothing is sent (tests/a.test.json)',
    );
    const many = { ...w, tests: ['a', 'b', 'c', 'd', 'e'].map((n) => `tests/${n}.test.json`) };
    expect(formatRunWarning(many)).toMatch(
      /\(tests\/a\.test\.json, tests\/b\.test\.json, tests\/c\.test\.json and 2 more\)$/,
    );
  });

  it('names a file that looks like a test but will not run (issue 28)', () => {
    expect(
      formatRunWarning({
        kind: 'misnamed-test',
        file: 'tests/general/split-merge.testjson',
        field: 'testThisStep',
      }),
    ).toBe(
      '"tests/general/split-merge.testjson" looks like a test (it has "testThisStep") but will not run: ' +
        'only files named *.test.json run',
    );
  });
});

describe('JUnit report', () => {
  it('escapes names, messages and diffs containing <&"\' and control characters', () => {
    const xml = formatJunitReport(summary);
    expect(xml).toContain('name="tests/&lt;weird&gt; &amp; &quot;quoted&quot;.test.json"');
    expect(xml).not.toContain('<weird>');
    expect(xml).toContain('<testsuite name="workflow-tests" tests="3" failures="1" errors="0" skipped="1"');
    expect(xml).toContain('<skipped message="ignore: true"/>');
    expect(xml).toContain('<failure message="a log line was not written" type="log-missing">');
    expect(escapeXml("a\u0000b\u001bc\ud800d\ufffee\tf\ng\rh'")).toBe(
      'a\ufffdb\ufffdc\ufffdd\ufffde\tf\ng&#13;h&apos;',
    );
  });

  it('is well-formed: every element opened is closed, in order', () => {
    const xml = formatJunitReport(summary);
    const stack: string[] = [];
    for (const m of xml.matchAll(/<(\/?)([a-z]+)[^>]*?(\/?)>/g)) {
      if (m[3] === '/') continue;
      if (m[1] === '/') expect(stack.pop()).toBe(m[2]);
      else stack.push(m[2]!);
    }
    expect(stack).toEqual([]);
  });
});
