import { renderMockCalls } from './assertions.js';
import type { LegacyNotice } from './legacy.js';
import type { RunSummary, TestResult } from './run.js';
import { TEST_FILE_SUFFIX } from './discover.js';
import { quoteName } from './internal/text.js';
import type { RunWarning } from './warnings.js';

/** Reporters the command line offers (`--reporter`). */
export const REPORTERS = ['text', 'junit'] as const;
/** A name from {@link REPORTERS}. */
export type ReporterName = (typeof REPORTERS)[number];

const MARK = { passed: '✓', failed: '✗', skipped: '-' } as const;

function label(r: TestResult, iterations: number): string {
  return iterations > 1 ? `${r.name} #${r.iteration}` : r.name;
}

/**
 * One line per result: `✓ name (12 ms)`, `✗ name (40 ms)`, or `- name (skipped: ignore: true)`.
 *
 * @param iterations - the run's iteration count; above 1 the line names the iteration (`name #2`).
 */
export function formatResultLine(r: TestResult, iterations = 1): string {
  const tail = r.status === 'skipped' ? `skipped: ${r.skipReason ?? ''}` : `${Math.round(r.durationMs)} ms`;
  return `${MARK[r.status]} ${label(r, iterations)} (${tail})`;
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((l) => by + l)
    .join('\n');
}

/**
 * The readable diff of a failed result: each failure with expected and actual, then the run errors and the
 * mock server's call log. Empty for a passed or skipped result.
 */
export function formatFailureDetails(r: TestResult): string {
  if (r.status !== 'failed') return '';
  const out: string[] = [];
  r.failures.forEach((f, i) => {
    out.push(`  ${i + 1}) ${f.message}`);
    if (f.expected !== undefined) out.push('     expected:', indent(f.expected, '       '));
    if (f.actual !== undefined && f.kind.startsWith('mock') === false && f.kind !== 'host-not-mocked') {
      out.push('     actual:', indent(f.actual, '       '));
    }
  });
  if (r.errors.length > 0) out.push('  run errors:', indent(r.errors.join('\n'), '    '));
  out.push('  mock calls:', indent(renderMockCalls(r.mockCalls), '    '));
  return out.join('\n');
}

/** The closing line: `N passed, N failed, N skipped`. */
export function formatSummaryLine(s: Pick<RunSummary, 'passed' | 'failed' | 'skipped'>): string {
  return `${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped`;
}

/** One line per legacy field: what it no longer does, and how many files use it. */
export function formatLegacyNotices(notices: readonly LegacyNotice[]): string[] {
  return notices.map((n) => {
    const files = n.files.length === 1 ? (n.files[0] as string) : `${n.files.length} files`;
    return `legacy field ${n.field} (${files}): ${n.message}`;
  });
}

/** Most test names a warning lists; the rest are counted. */
const NAMED_TESTS = 3;

function testList(names: readonly string[]): string {
  const shown = names.slice(0, NAMED_TESTS).join(', ');
  return names.length > NAMED_TESTS ? `${shown} and ${names.length - NAMED_TESTS} more` : shown;
}

/**
 * One line per warning, for before the run: `host "billing" (https://billing.example.com) is not mocked: calls to
 * it are answered as a refused connection, nothing is sent (tests/a.test.json)`, or `tests/x.testjson looks like
 * a test (it has "testThisStep") but will not run: only files named *.test.json run`.
 */
export function formatRunWarning(w: RunWarning): string {
  if (w.kind === 'misnamed-test')
    return `${quoteName(w.file)} looks like a test (it has "${w.field}") but will not run: only files named *${TEST_FILE_SUFFIX} run`;
  return (
    `host ${quoteName(w.hostId)} (${w.origin}) is not mocked: calls to it are answered as a refused ` +
    `connection, nothing is sent (${testList(w.tests)})`
  );
}

/**
 * The whole text report: result lines (each failure followed by its diff), legacy notices, the closing line.
 *
 * @param iterations - the run's iteration count.
 */
export function formatTextReport(s: RunSummary, iterations = 1): string {
  const lines: string[] = [];
  for (const r of s.results) {
    lines.push(formatResultLine(r, iterations));
    if (r.status === 'failed') lines.push(formatFailureDetails(r));
  }
  lines.push(...formatLegacyNotices(s.legacy), formatSummaryLine(s));
  return `${lines.join('\n')}\n`;
}

// XML 1.0 allows tab, LF, CR and the ranges below; anything else (other controls, lone surrogates, U+FFFE/F)
// cannot appear even escaped, so it is replaced by U+FFFD.
const XML_FORBIDDEN =
  // eslint-disable-next-line no-control-regex -- removing what XML forbids is the point
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Escapes text for XML element content and double-quoted attributes. */
export function escapeXml(text: string): string {
  return text
    .replace(XML_FORBIDDEN, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\r/g, '&#13;');
}

function testcase(r: TestResult, iterations: number): string {
  const name = escapeXml(label(r, iterations));
  const time = (r.durationMs / 1000).toFixed(3);
  const open = `  <testcase classname="workflow-tests" name="${name}" time="${time}"`;
  if (r.status === 'passed') return `${open}/>`;
  if (r.status === 'skipped')
    return `${open}>\n    <skipped message="${escapeXml(r.skipReason ?? '')}"/>\n  </testcase>`;
  const first = r.failures[0]?.message ?? 'failed';
  const kind = r.failures[0]?.kind ?? 'failed';
  return [
    `${open}>`,
    `    <failure message="${escapeXml(first)}" type="${escapeXml(kind)}">${escapeXml(formatFailureDetails(r))}</failure>`,
    '  </testcase>',
  ].join('\n');
}

/**
 * A JUnit XML report (one `<testsuite>`), as read by CI systems: every name, message and diff is escaped, and
 * characters XML cannot carry are replaced by U+FFFD.
 *
 * @param iterations - the run's iteration count.
 * @param suiteName - the `<testsuite name>`. Default `workflow-tests`.
 */
export function formatJunitReport(s: RunSummary, iterations = 1, suiteName = 'workflow-tests'): string {
  const time = (s.results.reduce((t, r) => t + r.durationMs, 0) / 1000).toFixed(3);
  const head = `<testsuite name="${escapeXml(suiteName)}" tests="${s.results.length}" failures="${s.failed}" errors="0" skipped="${s.skipped}" time="${time}">`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    head,
    ...s.results.map((r) => testcase(r, iterations)),
    '</testsuite>',
    '',
  ].join('\n');
}
