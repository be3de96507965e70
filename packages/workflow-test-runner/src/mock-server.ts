import { isTestRunnerError, TestRunnerError } from './errors.js';
import { quoteName, sameBytes } from './internal/text.js';
import { isMockUrl, MOCK_HOSTNAME } from './mock-url.js';
import type { MockEndpointSpec } from './test-file.js';

/**
 * An outbound request as the agent's EngineHost has it after the host policy allowed the call: the decided
 * absolute URL, the method, the merged headers (host headers included) and the body.
 */
export interface MockRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: Uint8Array | string | undefined;
  /** Aborts a pending `delay`. */
  readonly signal?: AbortSignal | undefined;
}

/** The answer, shaped like the engine's `OutboundResponse` (lower-case header names, every value). */
export interface MockResponse {
  status: number;
  headers: Record<string, string[]>;
  body: Uint8Array;
}

/** The in-process transport a deployer installs instead of the network for every outbound HTTP call. */
export type MockTransport = (req: MockRequest) => Promise<MockResponse>;

/** A mocked endpoint: its spec plus the response body (from `returnThisFile`, `returnThisBody`, or empty). */
export interface MockEndpoint extends MockEndpointSpec {
  body: Uint8Array;
}

/**
 * What happened to one request. `aborted`: an endpoint took it, but its `delay` was cut short (the request's
 * signal, or {@link MockServer.close} when the test ended) and no answer was sent.
 */
export type MockCallOutcome = 'answered' | 'unmatched' | 'exhausted' | 'not-mock' | 'aborted';

/** One recorded request and what the mock did with it. */
export interface MockCall {
  /** 0-based order of arrival. */
  seq: number;
  url: string;
  method: string;
  /** Lower-case names. */
  headers: Record<string, string[]>;
  body: Uint8Array;
  outcome: MockCallOutcome;
  /** Index in `mockEndpointResponses` of the endpoint that took the call (answered or `aborted`), else null. */
  endpoint: number | null;
  /** Status sent back (absent for `not-mock` and `aborted`: nothing was sent). */
  status?: number;
  /** Why no endpoint matched, per endpoint with the same URL; for `aborted`, why no answer was sent. */
  reasons?: string[];
}

/** Status answered when no endpoint matches (as a stand-alone mock server would). */
export const UNMATCHED_STATUS = 404;

/** Options of {@link createMockServer}. */
export interface CreateMockServerOptions {
  /** Waits `ms` (for `delay`); rejects when `signal` aborts. Default: a timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A mock server model for one test run. */
export interface MockServer {
  /**
   * Answers a request, or refuses it with `TESTRUNNER_HOST_NOT_MOCKED` when it is not for the mock host (S156),
   * which a deployer hands the engine as a refused connection (issue 28: `httpConnectFailedProcessor` runs).
   */
  readonly transport: MockTransport;
  /** Every request so far, in order of arrival. */
  calls(): readonly MockCall[];
  /** Calls answered by each endpoint, by index. */
  counts(): readonly number[];
  /**
   * Ends the server when its test has ended: every pending `delay` is cut at once (its timer cleared, its call
   * recorded as `aborted`, its request rejected with `TESTRUNNER_TIMEOUT`), and later requests are refused the
   * same way. So a mock delay longer than the test's wait never keeps the process alive. Idempotent.
   */
  close(): void;
}

const encoder = new TextEncoder();

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason as Error);
    const t = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort(): void {
      clearTimeout(t);
      reject(signal?.reason as Error);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function normaliseHeaders(h: Readonly<Record<string, string | readonly string[]>>): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of Object.entries(h)) {
    const name = k.toLowerCase();
    out[name] = [...(out[name] ?? []), ...(typeof v === 'string' ? [v] : v)];
  }
  return out;
}

function bodyBytes(body: Uint8Array | string | undefined): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  return typeof body === 'string' ? encoder.encode(body) : body;
}

function normaliseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** Why `ep` does not take this request, or an empty list when it does. URL equality is checked by the caller. */
function mismatches(
  ep: MockEndpoint,
  method: string,
  headers: Record<string, string[]>,
  body: Uint8Array,
): string[] {
  const why: string[] = [];
  if (ep.withMethod !== undefined && ep.withMethod !== method)
    why.push(`method ${method}, expected ${ep.withMethod}`);
  if (ep.expectedPayload !== undefined && !sameBytes(encoder.encode(ep.expectedPayload), body)) {
    why.push('payload differs from expectedPayload');
  }
  for (const [name, expected] of Object.entries(ep.expectedHeaders ?? {})) {
    const got = headers[name];
    if (got === undefined) why.push(`header ${quoteName(name)} missing`);
    else if (got.join(', ') !== expected.join(', ')) why.push(`header ${quoteName(name)} differs`);
  }
  return why;
}

type Found = { index: number } | { reasons: string[]; exhausted: boolean };

/** The first endpoint, in file order, that takes the request; or why none does. */
function pick(
  endpoints: readonly MockEndpoint[],
  counts: readonly number[],
  url: string,
  req: { method: string; headers: Record<string, string[]>; body: Uint8Array },
): Found {
  const reasons: string[] = [];
  let exhausted = false;
  for (const [i, ep] of endpoints.entries()) {
    if (ep.whenThisIsCalled !== url) continue;
    const why = mismatches(ep, req.method, req.headers, req.body);
    if (why.length > 0) {
      reasons.push(`endpoint ${i}: ${why.join('; ')}`);
      continue;
    }
    if (ep.thisManyTimes !== undefined && (counts[i] as number) >= ep.thisManyTimes) {
      exhausted = true;
      reasons.push(`endpoint ${i}: already answered thisManyTimes (${ep.thisManyTimes})`);
      continue;
    }
    return { index: i };
  }
  return { reasons, exhausted };
}

function refuseHost(url: URL | null): TestRunnerError {
  const host = url === null ? 'an unparsable URL' : `${url.protocol}//${url.host}`;
  return new TestRunnerError(
    'TESTRUNNER_HOST_NOT_MOCKED',
    `${host} is not mocked: tests only reach http://${MOCK_HOSTNAME}; it was not contacted`,
    { details: { host: url?.host ?? null } },
  );
}

/** Why a call to another host got no answer (the mock call log). */
const NOT_MOCKED = 'not mocked: answered as a refused connection, nothing was sent';

function answer(ep: MockEndpoint): MockResponse {
  const headers = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of Object.entries(ep.mockedHeaders)) headers[k] = [...v];
  return { status: ep.returnThisStatusCode, headers, body: ep.body.slice() };
}

/** A deployer cuts its calls with `TESTRUNNER_TIMEOUT` when the test's wait is over. */
function isEndOfTest(reason: unknown): boolean {
  return isTestRunnerError(reason) && reason.code === 'TESTRUNNER_TIMEOUT';
}

/** Why a request got no answer once the server was closed (the test had ended). */
const ENDED = 'the test had ended';

/**
 * Creates the mock server model of one test run (docs/interfaces.md §7.3). A request is for the mock when its host is
 * `mockserver`; any other host is refused before anything is sent (S156). An endpoint takes a request when the
 * WHATWG-normalised URLs are equal (query included, in order), `withMethod` (if set) equals the method,
 * `expectedPayload` (if set) equals the body byte for byte, and every `expectedHeaders` entry equals the
 * request's values for that name (case-insensitive name). Endpoints are tried in file order; one that has
 * answered `thisManyTimes` calls no longer takes requests. It answers after `delay` ms with
 * `returnThisStatusCode` (200), `mockedHeaders` and its body; a request no endpoint takes gets 404. Every
 * request is recorded. A `delay` ends early, with no answer, when the request's signal aborts or the server is
 * closed ({@link MockServer.close}).
 *
 * @param endpoints - the test's endpoints with their bodies, in file order.
 */
export function createMockServer(
  endpoints: readonly MockEndpoint[],
  options: CreateMockServerOptions = {},
): MockServer {
  const sleep = options.sleep ?? defaultSleep;
  const log: MockCall[] = [];
  const counts = endpoints.map(() => 0);
  const closing = new AbortController();
  /**
   * Waits out an endpoint's delay. When it is cut short the call is recorded as `aborted` (nothing was sent) at
   * once, in the abort itself, so the log is right as soon as {@link MockServer.close} returns.
   */
  const delay = async (call: MockCall, ep: MockEndpoint, signal: AbortSignal | undefined): Promise<void> => {
    const cut = signal === undefined ? closing.signal : AbortSignal.any([signal, closing.signal]);
    const markAborted = (): void => {
      if (log[call.seq] !== call) return;
      const why = closing.signal.aborted || isEndOfTest(cut.reason) ? ENDED : 'the request was aborted';
      const { status: _sent, ...rest } = call;
      log[call.seq] = {
        ...rest,
        outcome: 'aborted',
        reasons: [`no answer: ${why} during its ${ep.delay} ms delay`],
      };
    };
    // A call that arrives cut (its test already over) does not start a timer at all.
    if (cut.aborted) {
      markAborted();
      throw cut.reason as Error;
    }
    cut.addEventListener('abort', markAborted, { once: true });
    try {
      await sleep(ep.delay, cut);
    } catch (err) {
      markAborted();
      throw err;
    } finally {
      cut.removeEventListener('abort', markAborted);
    }
  };
  const transport: MockTransport = async (req) => {
    const headers = normaliseHeaders(req.headers);
    const body = bodyBytes(req.body);
    const method = req.method.toUpperCase();
    const base = { seq: log.length, url: req.url, method, headers, body };
    const url = normaliseUrl(req.url);
    if (url === null || !isMockUrl(url)) {
      log.push({ ...base, outcome: 'not-mock', endpoint: null, reasons: [NOT_MOCKED] });
      throw refuseHost(url);
    }
    if (closing.signal.aborted) {
      log.push({ ...base, outcome: 'aborted', endpoint: null, reasons: [`no answer: ${ENDED}`] });
      throw closing.signal.reason as Error;
    }
    const found = pick(endpoints, counts, url.href, { method, headers, body });
    if ('reasons' in found) {
      const outcome = found.exhausted ? 'exhausted' : 'unmatched';
      log.push({ ...base, outcome, endpoint: null, status: UNMATCHED_STATUS, reasons: found.reasons });
      return {
        status: UNMATCHED_STATUS,
        headers: Object.create(null) as Record<string, string[]>,
        body: new Uint8Array(0),
      };
    }
    const ep = endpoints[found.index] as MockEndpoint;
    counts[found.index] = (counts[found.index] as number) + 1;
    const call: MockCall = {
      ...base,
      outcome: 'answered',
      endpoint: found.index,
      status: ep.returnThisStatusCode,
    };
    log.push(call);
    if (ep.delay > 0) await delay(call, ep, req.signal);
    return answer(ep);
  };
  const close = (): void => {
    if (closing.signal.aborted) return;
    closing.abort(
      new TestRunnerError('TESTRUNNER_TIMEOUT', `the mock server was closed: ${ENDED}, no answer was sent`),
    );
  };
  return { transport, calls: () => log.slice(), counts: () => counts.slice(), close };
}
