import type { JsonObject } from '@org/workflow-compiler';
import { TestRunnerError } from './errors.js';
import { testFile as validateTest } from './generated/validators.js';
import { isTrue, plainObject, readJson } from './internal/json.js';
import { checkSchema } from './internal/schema-check.js';
import { quoteName } from './internal/text.js';
import { noteLegacy, type LegacyNotice } from './legacy.js';
import { isMockUrl, MOCK_HOSTNAME } from './mock-url.js';

/** Default of `secondsToWaitForCompletion` (docs/interfaces.md §7.3). */
export const DEFAULT_WAIT_SECONDS = 10;
/** Default of `makeTheseCalls[].timeoutSeconds`. */
export const DEFAULT_CALL_TIMEOUT_SECONDS = 10;

/** One `mockEndpointResponses[]` entry, normalised. */
export interface MockEndpointSpec {
  /** Full URL on the mock host, WHATWG-normalised (`href`). */
  whenThisIsCalled: string;
  /** Upper-case method, or undefined for any. */
  withMethod: string | undefined;
  expectedPayload: string | undefined;
  /** Lower-case header names → expected values. */
  expectedHeaders: Record<string, string[]> | undefined;
  returnThisFile: string | undefined;
  returnThisBody: string | undefined;
  /** Default 200. */
  returnThisStatusCode: number;
  /** Lower-case header names → values. */
  mockedHeaders: Record<string, string[]>;
  /** Answers at most this many calls, and expects exactly this many; undefined: any number, at least one. */
  thisManyTimes: number | undefined;
  /** Milliseconds before answering. Default 0. */
  delay: number;
}

/** One `theseMetricsShouldHaveBeenSent[]` entry. */
export interface ExpectedMetric {
  key: string;
  value: number;
  timestamp: number | undefined;
  dimensionMap: Record<string, string> | undefined;
}

/** One `makeTheseCalls[]` entry, normalised. */
export interface CallSpec {
  url: string;
  /** Upper-case; default GET. */
  method: string;
  headers: [string, string][];
  body: string | undefined;
  expectedResponse: string | undefined;
  /** Default 200. */
  expectedResponseCode: number;
  expectedSize: number | undefined;
  timeoutSeconds: number;
}

/** A `*.test.json`, validated and normalised (defaults applied, legacy spellings folded in). */
export interface TestSpec {
  /** Why the test is skipped (`ignore`, `ignored`, `enabled: false`), or undefined when it runs. */
  skip: string | undefined;
  fromDirectory: string;
  testThisStep: string;
  useThisTestConfigFile: string | undefined;
  useThisTestBootstrapFile: string | undefined;
  mockEndpointResponses: MockEndpointSpec[];
  theseMetricsShouldHaveBeenSent: ExpectedMetric[];
  theseLogsShouldHaveBeenSent: string[];
  logsShouldNotContain: string[];
  makeTheseCalls: CallSpec[];
  timestampOverride: number | undefined;
  secondsToWaitForCompletion: number;
  data: JsonObject | undefined;
  variables: Record<string, string>;
  manifest: JsonObject | undefined;
  legacy: LegacyNotice[];
}

/**
 * Parses and validates one `*.test.json` (docs/interfaces.md §7.3) against `TEST_FILE_SCHEMA` (src/schemas.ts) and
 * normalises it: `"true"` strings become booleans, numeric-string statuses become numbers, header names become lower
 * case, legacy spellings (`testThisRoute`, `ignored`) are read as their new names and reported in `legacy`. Every
 * `whenThisIsCalled` must be a URL on the mock host. Reads no files.
 *
 * @param file - how the file is named in messages.
 * @throws TestRunnerError `TESTRUNNER_JSON_INVALID`, `TESTRUNNER_TEST_INVALID` (every violation in `details.errors`
 *   as `{ file, pointer, detail }`).
 */
export function parseTestFile(input: Uint8Array | string, file: string): TestSpec {
  const value = readJson(input, file);
  checkSchema(validateTest, value, 'TESTRUNNER_TEST_INVALID', file);
  const t = value as JsonObject;
  const legacy = collectLegacy(t, file);
  const list = <T>(name: string): T[] => (t[name] as T[] | undefined) ?? [];
  return {
    skip: skipReason(t),
    fromDirectory: t['fromDirectory'] as string,
    testThisStep: (t['testThisStep'] ?? t['testThisRoute']) as string,
    useThisTestConfigFile: t['useThisTestConfigFile'] as string | undefined,
    useThisTestBootstrapFile: t['useThisTestBootstrapFile'] as string | undefined,
    mockEndpointResponses: list<JsonObject>('mockEndpointResponses').map((m, i) => toMock(m, i, file)),
    theseMetricsShouldHaveBeenSent: list<JsonObject>('theseMetricsShouldHaveBeenSent').map(toMetric),
    theseLogsShouldHaveBeenSent: list<string>('theseLogsShouldHaveBeenSent'),
    logsShouldNotContain: list<string>('logsShouldNotContain'),
    makeTheseCalls: list<JsonObject>('makeTheseCalls').map((c, i) => toCall(c, i, file)),
    timestampOverride: t['timestampOverride'] as number | undefined,
    secondsToWaitForCompletion:
      (t['secondsToWaitForCompletion'] as number | undefined) ?? DEFAULT_WAIT_SECONDS,
    data: t['data'] as JsonObject | undefined,
    variables: plainObject(Object.entries((t['variables'] as Record<string, string> | undefined) ?? {})),
    manifest: t['manifest'] as JsonObject | undefined,
    legacy,
  };
}

function collectLegacy(t: JsonObject, file: string): LegacyNotice[] {
  const legacy: LegacyNotice[] = [];
  for (const field of ['testThisRoute', 'ignored', 'enabled'])
    if (t[field] !== undefined) noteLegacy(legacy, field, file);
  const metrics = (t['theseMetricsShouldHaveBeenSent'] as JsonObject[] | undefined) ?? [];
  if (metrics.some((m) => m['toThisRoute'] !== undefined))
    noteLegacy(legacy, 'theseMetricsShouldHaveBeenSent[].toThisRoute', file);
  return legacy;
}

function skipReason(t: JsonObject): string | undefined {
  if (isTrue(t['ignore'])) return 'ignore: true';
  if (isTrue(t['ignored'])) return 'ignored: true';
  if (t['enabled'] === false || t['enabled'] === 'false') return 'enabled: false';
  return undefined;
}

function toStatus(v: unknown, fallback: number): number {
  return v === undefined ? fallback : Number(v);
}

/** Header maps: lower-case names; a single string value becomes a one-element list. */
function headerMap(v: unknown): Record<string, string[]> {
  const entries = Object.entries((v ?? {}) as Record<string, string | string[]>);
  return plainObject(
    entries.map(([k, vals]) => [k.toLowerCase(), typeof vals === 'string' ? [vals] : [...vals]]),
  );
}

function mockUrl(url: string, i: number, file: string): string {
  let parsed: URL;
  const fail = (why: string): never => {
    const pointer = `/mockEndpointResponses/${i}/whenThisIsCalled`;
    throw new TestRunnerError('TESTRUNNER_TEST_INVALID', `${file}: ${pointer} ${why}`, {
      details: { errors: [{ file, pointer, detail: why }] },
    });
  };
  try {
    parsed = new URL(url);
  } catch {
    return fail('is not an absolute URL');
  }
  if (!isMockUrl(parsed)) {
    return fail(`must be a URL on http://${MOCK_HOSTNAME} (found host ${quoteName(parsed.host)})`);
  }
  return parsed.href;
}

function toMock(m: JsonObject, i: number, file: string): MockEndpointSpec {
  return {
    whenThisIsCalled: mockUrl(m['whenThisIsCalled'] as string, i, file),
    withMethod: m['withMethod'] as string | undefined,
    expectedPayload: m['expectedPayload'] as string | undefined,
    expectedHeaders: m['expectedHeaders'] === undefined ? undefined : headerMap(m['expectedHeaders']),
    returnThisFile: m['returnThisFile'] as string | undefined,
    returnThisBody: m['returnThisBody'] as string | undefined,
    returnThisStatusCode: toStatus(m['returnThisStatusCode'], 200),
    mockedHeaders: headerMap(m['mockedHeaders']),
    thisManyTimes: m['thisManyTimes'] as number | undefined,
    delay: (m['delay'] as number | undefined) ?? 0,
  };
}

function toMetric(m: JsonObject): ExpectedMetric {
  return {
    key: m['key'] as string,
    value: m['value'] as number,
    timestamp: m['timestamp'] as number | undefined,
    dimensionMap:
      m['dimensionMap'] === undefined
        ? undefined
        : plainObject(Object.entries(m['dimensionMap'] as Record<string, string>)),
  };
}

function toCall(c: JsonObject, i: number, file: string): CallSpec {
  const url = c['url'] as string;
  try {
    new URL(url);
  } catch {
    const pointer = `/makeTheseCalls/${i}/url`;
    throw new TestRunnerError('TESTRUNNER_TEST_INVALID', `${file}: ${pointer} is not an absolute URL`, {
      details: { errors: [{ file, pointer, detail: 'is not an absolute URL' }] },
    });
  }
  return {
    url,
    method: (c['method'] as string | undefined) ?? 'GET',
    headers: ((c['headers'] as [string, string][] | undefined) ?? []).map(([k, v]) => [k, v]),
    body: c['body'] as string | undefined,
    expectedResponse: c['expectedResponse'] as string | undefined,
    expectedResponseCode: toStatus(c['expectedResponseCode'], 200),
    expectedSize: c['expectedSize'] as number | undefined,
    timeoutSeconds: (c['timeoutSeconds'] as number | undefined) ?? DEFAULT_CALL_TIMEOUT_SECONDS,
  };
}
