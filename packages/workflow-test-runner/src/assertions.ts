import { utf8OrNull } from './internal/text.js';
import type { MockCall, MockEndpoint } from './mock-server.js';
import type { CallSpec, ExpectedMetric } from './test-file.js';

/** A metric as the deployment sent it (the EngineHost `metric` shape). */
export interface ObservedMetric {
  key: string;
  value: number;
  timestamp: number;
  dimensions: Readonly<Record<string, string>>;
}

/** What one `makeTheseCalls[]` request got: a response, or why none came. */
export type CallOutcome =
  | { status: number; headers?: Readonly<Record<string, readonly string[]>>; body: Uint8Array }
  | { error: string };

/** Everything a deployer observed during one run of one test. */
export interface Observation {
  /** Every metric sent, in order. */
  metrics: readonly ObservedMetric[];
  /** Every log line written by the deployment (workflow console lines and diagnostics), in order. */
  logs: readonly string[];
  /** One outcome per `makeTheseCalls[]` entry, same order; empty when the test makes no calls. */
  calls: readonly CallOutcome[];
  /**
   * True when the triggered work finished before `secondsToWaitForCompletion`. False fails the test with a
   * `timeout` failure naming the test and the wait, whatever it expects (even nothing).
   */
  completed: boolean;
  /** Run errors the deployer saw (step errors, start-up failures). Shown in the report; not asserted. */
  errors?: readonly string[];
  /**
   * The deployment's redactor (its registered secrets). The runner passes every text it reports — failure texts,
   * mock call URLs and reasons — through it, so a secret that reached a mock never reaches a report.
   */
  redact?: (text: string) => string;
}

/** The kinds of failed expectation; every assertion of docs/interfaces.md §7.3 has at least one. */
export type FailureKind =
  | 'metric-missing'
  | 'log-missing'
  | 'log-forbidden'
  | 'mock-not-called'
  | 'mock-call-count'
  | 'mock-unexpected-call'
  /** @deprecated no longer produced: a call to another host is a refused connection for the workflow (issue 28). */
  | 'host-not-mocked'
  | 'call-failed'
  | 'call-status'
  | 'call-body'
  | 'call-size'
  | 'prepare'
  | 'deploy'
  | 'timeout';

/** One failed expectation, with what was expected and what was found (already rendered as text). */
export interface Failure {
  kind: FailureKind;
  message: string;
  expected?: string;
  actual?: string;
}

/** What {@link evaluateRun} checks, taken from the prepared test. */
export interface Expectations {
  metrics: readonly ExpectedMetric[];
  logs: readonly string[];
  logsAbsent: readonly string[];
  calls: readonly CallSpec[];
  endpoints: readonly MockEndpoint[];
}

/** Longest rendering of a body or list in a failure; the rest is elided. */
export const MAX_DIFF_CHARS = 2000;

function clip(s: string): string {
  return s.length > MAX_DIFF_CHARS
    ? `${s.slice(0, MAX_DIFF_CHARS)}… (${s.length - MAX_DIFF_CHARS} more characters)`
    : s;
}

function renderBody(b: Uint8Array): string {
  const text = utf8OrNull(b);
  return text === null ? `<${b.byteLength} bytes, not UTF-8>` : clip(JSON.stringify(text));
}

function renderMetric(m: { key: string; value: number; timestamp?: number; dimensions?: unknown }): string {
  return JSON.stringify(m);
}

function sameDimensions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return (
    ka.length === Object.keys(b).length &&
    ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && b[k] === a[k])
  );
}

/** Metric rule: some sent metric has the key and value; `timestamp` and `dimensionMap` (exact) when given. */
function metricMatches(e: ExpectedMetric, m: ObservedMetric): boolean {
  return (
    m.key === e.key &&
    m.value === e.value &&
    (e.timestamp === undefined || m.timestamp === e.timestamp) &&
    (e.dimensionMap === undefined || sameDimensions(e.dimensionMap, m.dimensions))
  );
}

function checkMetrics(exp: readonly ExpectedMetric[], got: readonly ObservedMetric[]): Failure[] {
  return exp
    .filter((e) => !got.some((m) => metricMatches(e, m)))
    .map((e) => {
      const expected: { key: string; value: number; timestamp?: number; dimensions?: unknown } = {
        key: e.key,
        value: e.value,
      };
      if (e.timestamp !== undefined) expected.timestamp = e.timestamp;
      if (e.dimensionMap !== undefined) expected.dimensions = e.dimensionMap;
      const sameKey = got.filter((m) => m.key === e.key);
      const shown = sameKey.length > 0 ? sameKey : got;
      return {
        kind: 'metric-missing' as const,
        message: `metric ${JSON.stringify(e.key)} was not sent as expected`,
        expected: renderMetric(expected),
        actual: shown.length === 0 ? '(no metrics were sent)' : clip(shown.map(renderMetric).join('\n')),
      };
    });
}

function renderLogs(logs: readonly string[]): string {
  return logs.length === 0 ? '(no log lines)' : clip(logs.join('\n'));
}

/** Log rules: an expected entry is a substring of some line; a forbidden fragment is a substring of none. */
function checkLogs(want: readonly string[], absent: readonly string[], logs: readonly string[]): Failure[] {
  const out: Failure[] = [];
  for (const w of want) {
    if (!logs.some((l) => l.includes(w))) {
      out.push({
        kind: 'log-missing',
        message: 'a log line was not written',
        expected: JSON.stringify(w),
        actual: renderLogs(logs),
      });
    }
  }
  for (const a of absent) {
    const hits = logs.filter((l) => l.includes(a));
    if (hits.length > 0) {
      out.push({
        kind: 'log-forbidden',
        message: `${hits.length} log line(s) contain a forbidden fragment`,
        expected: `no line containing ${JSON.stringify(a)}`,
        actual: renderLogs(hits),
      });
    }
  }
  return out;
}

/** Renders the mock call log for diffs: one line per call. */
export function renderMockCalls(calls: readonly MockCall[]): string {
  if (calls.length === 0) return '(no outbound calls)';
  return clip(
    calls
      .map((c) => {
        const to = c.endpoint === null ? c.outcome : `endpoint ${c.endpoint}`;
        const status = c.status === undefined ? 'not sent' : String(c.status);
        const why = c.reasons !== undefined && c.reasons.length > 0 ? ` (${c.reasons.join(' | ')})` : '';
        return `#${c.seq} ${c.method} ${c.url} → ${to}, ${status}${why}`;
      })
      .join('\n'),
  );
}

/**
 * Mock rules: each endpoint called at least once (exactly `thisManyTimes` when set); no call to the mock that no
 * endpoint takes.
 */
function checkMocks(endpoints: readonly MockEndpoint[], calls: readonly MockCall[]): Failure[] {
  const out: Failure[] = [];
  const log = renderMockCalls(calls);
  endpoints.forEach((ep, i) => {
    const n = calls.filter((c) => c.endpoint === i).length;
    const label = `${ep.withMethod ?? 'any method'} ${ep.whenThisIsCalled}`;
    if (n === 0) {
      out.push({
        kind: 'mock-not-called',
        message: `mock endpoint ${i} (${label}) was not called`,
        expected: 'at least one call',
        actual: log,
      });
    } else if (ep.thisManyTimes !== undefined && n !== ep.thisManyTimes) {
      out.push({
        kind: 'mock-call-count',
        message: `mock endpoint ${i} (${label}) was called ${n} times`,
        expected: `${ep.thisManyTimes} calls`,
        actual: log,
      });
    }
  });
  // A call to another host (`not-mock`) is not a failure by itself (issue 28): the workflow saw a refused
  // connection, as on the reference, and the test's expectations judge what it did about it.
  for (const c of calls) {
    if (c.outcome === 'unmatched' || c.outcome === 'exhausted') {
      const what =
        c.outcome === 'exhausted' ? 'one call too many for its endpoint' : 'matches no mock endpoint';
      out.push({
        kind: 'mock-unexpected-call',
        message: `call #${c.seq} (${c.method} ${c.url}) ${what}`,
        expected: 'a call matching a mock endpoint',
        actual: log,
      });
    }
  }
  return out;
}

/** Call rules: status equals `expectedResponseCode` (200); body equals `expectedResponse`; size equals `expectedSize`. */
function checkCalls(specs: readonly CallSpec[], got: readonly CallOutcome[]): Failure[] {
  const out: Failure[] = [];
  specs.forEach((s, i) => {
    const label = `call ${i} (${s.method} ${s.url})`;
    const r = got[i];
    if (r === undefined || 'error' in r) {
      out.push({
        kind: 'call-failed',
        message: `${label} got no response`,
        expected: `status ${s.expectedResponseCode}`,
        actual: r === undefined ? '(not made)' : r.error,
      });
      return;
    }
    if (r.status !== s.expectedResponseCode) {
      out.push({
        kind: 'call-status',
        message: `${label} answered ${r.status}`,
        expected: String(s.expectedResponseCode),
        actual: `${r.status} ${renderBody(r.body)}`,
      });
    }
    if (s.expectedResponse !== undefined && utf8OrNull(r.body) !== s.expectedResponse) {
      out.push({
        kind: 'call-body',
        message: `${label} answered another body`,
        expected: clip(JSON.stringify(s.expectedResponse)),
        actual: renderBody(r.body),
      });
    }
    if (s.expectedSize !== undefined && r.body.byteLength !== s.expectedSize) {
      out.push({
        kind: 'call-size',
        message: `${label} answered ${r.body.byteLength} bytes`,
        expected: `${s.expectedSize} bytes`,
        actual: `${r.body.byteLength} bytes`,
      });
    }
  });
  return out;
}

/**
 * Evaluates every expectation of a test against what one run produced (rules in the README, "Assertions"). An
 * empty list means the test passed.
 *
 * @param exp - the test's expectations and mock endpoints.
 * @param observed - what the deployer returned.
 * @param mockCalls - the mock server's call log for the run.
 */
export function evaluateRun(
  exp: Expectations,
  observed: Observation,
  mockCalls: readonly MockCall[],
): Failure[] {
  return [
    ...checkMetrics(exp.metrics, observed.metrics),
    ...checkLogs(exp.logs, exp.logsAbsent, observed.logs),
    ...checkMocks(exp.endpoints, mockCalls),
    ...checkCalls(exp.calls, observed.calls),
  ];
}
