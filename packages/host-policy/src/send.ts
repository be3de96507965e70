import type { AllowedCall } from './decide.js';
import { checkHostCall } from './decide.js';
import { PolicyError } from './errors.js';
import type { HopResponse } from './internal/hop.js';
import { REDIRECT_STATUSES, sendHop } from './internal/hop.js';
import type { LookupFunction } from './internal/resolve.js';
import { asError, resolveChecked, systemLookup } from './internal/resolve.js';
import { DEFAULT_TIMEOUT_MS, MAX_REDIRECTS } from './limits.js';

export type { LookupFunction } from './internal/resolve.js';

/** Options of {@link sendOutbound}. */
export interface SendOutboundOptions {
  /** Request body; a string is sent as UTF-8. `content-length` is set from it. */
  readonly body?: Uint8Array | string;
  /** Total time for DNS, connect, every redirect hop and the whole response. Default: host `httpTimeout`, else 30 s. */
  readonly timeoutMs?: number;
  /** Time to establish each TCP connection. Default: `timeoutMs`. */
  readonly connectTimeoutMs?: number;
  /** Largest response body accepted, in bytes; one more aborts the call. Required. */
  readonly maxResponseBytes: number;
  /** Same-origin redirects to follow, 0 to 5. Default 5. */
  readonly maxRedirects?: number;
  /** Resolver. Default: `dns.promises.lookup` with `all: true`. Every answer is checked. */
  readonly lookup?: LookupFunction;
  /** Aborts the call; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** What the server answered (after same-origin redirects). */
export interface OutboundResponse {
  readonly status: number;
  /** Lower-case names, every value of each header. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly body: Uint8Array;
  /** The URL that produced this response. */
  readonly url: string;
  /** How many redirects were followed. */
  readonly redirects: number;
}

function positiveInt(v: unknown, name: string, max: number, min = 1): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${String(v)}`);
  }
  return v;
}

function checkDecision(decision: AllowedCall): void {
  if (decision?.allowed !== true || decision.host === undefined) {
    throw new TypeError('sendOutbound needs an allowed decision from checkOutboundCall');
  }
  if (decision.transport !== 'http' || decision.host.base === undefined) {
    throw new TypeError('sendOutbound handles transport "http" only; route inProc calls in-process');
  }
  // SPEC.md §3.5 final check, with the WHATWG parser: same origin, pathname inside the base path.
  const url = new URL(decision.url);
  const base = decision.host.base;
  const prefix = base.hasTrailingSlash ? base.basePath : `${base.basePath}/`;
  const inside = url.pathname === base.basePath || url.pathname.startsWith(prefix);
  if (url.origin !== new URL(base.origin).origin || !inside || url.pathname !== decision.pathname) {
    throw new PolicyError(
      'POLICY_PATH_ESCAPES_BASE',
      `host ${decision.hostId}: the decided URL left the base`,
      {
        details: { hostId: decision.hostId, rule: 'final-url-check' },
      },
    );
  }
}

function redirectError(
  current: AllowedCall,
  rule: string,
  message: string,
  extra: Record<string, unknown> = {},
) {
  return new PolicyError('POLICY_REDIRECT_BLOCKED', `host ${current.hostId}: ${message}`, {
    details: { hostId: current.hostId, rule, ...extra },
  });
}

/** 307/308 keep the method; 303, and 301/302 after a non-GET, continue as GET; HEAD stays HEAD. */
function redirectMethod(status: number, method: string): string {
  if (status === 307 || status === 308 || method === 'HEAD') return method;
  return 'GET';
}

/** The redirect target as a new decision, or undefined when `res` is not a redirect to follow (SPEC.md §9.2). */
function nextHop(
  current: AllowedCall,
  res: HopResponse,
  hops: number,
  maxRedirects: number,
): AllowedCall | undefined {
  const location = res.headers['location']?.[0];
  if (!REDIRECT_STATUSES.has(res.status) || location === undefined) return undefined;
  let target: URL;
  try {
    target = new URL(location, current.url);
  } catch {
    throw redirectError(current, 'redirect-location', 'the redirect location is not a valid URL');
  }
  const base = current.host.base!;
  const host = target.hostname.endsWith('.') ? target.hostname.slice(0, -1) : target.hostname;
  if (`${target.protocol}//${host}${target.port === '' ? '' : `:${target.port}`}` !== base.origin) {
    throw redirectError(current, 'redirect-origin', 'a redirect to another origin is not followed');
  }
  if (hops >= maxRedirects)
    throw redirectError(current, 'redirect-hop-limit', `more than ${maxRedirects} redirects`);
  const prefix = base.hasTrailingSlash ? base.basePath : `${base.basePath}/`;
  const rel = target.pathname === base.basePath ? '' : target.pathname.slice(prefix.length);
  if ((target.pathname !== base.basePath && !target.pathname.startsWith(prefix)) || rel.startsWith('/')) {
    throw redirectError(current, 'redirect-base-path', 'the redirect leaves the base path');
  }
  const again = checkHostCall(current.host, {
    hostId: current.hostId,
    path: rel + target.search,
    method: redirectMethod(res.status, current.method),
    isAuthenticationProcessor: true, // the first decision already passed the authentication-host rule
  });
  if (!again.allowed) {
    throw redirectError(current, 'redirect-recheck', 'the redirect target is refused by the policy', {
      deniedBy: again.code,
      deniedRule: again.rule,
    });
  }
  return { ...again, headers: current.headers, droppedHeaders: current.droppedHeaders };
}

/**
 * Performs an allowed outbound call on `node:http`/`node:https` (SPEC.md §9): resolves the host with the
 * injectable `lookup`, checks every address against the address policy, dials the checked address with the
 * configured host name as `Host` and SNI, applies the connect and total timeouts and the response byte cap, and
 * follows only same-origin redirects that pass the same policy check again (at most 5).
 *
 * @throws TypeError when `decision` is not an allowed `http` decision; RangeError for bad numeric options
 * @throws PolicyError POLICY_PRIVATE_ADDRESS, POLICY_CONNECT_FAILED, POLICY_TIMEOUT, POLICY_RESPONSE_TOO_LARGE,
 * POLICY_REDIRECT_BLOCKED, POLICY_PATH_ESCAPES_BASE (final URL check); each names the host id and the rule
 */
export async function sendOutbound(
  decision: AllowedCall,
  options: SendOutboundOptions,
): Promise<OutboundResponse> {
  checkDecision(decision);
  const { timeoutMs, ...limits } = readLimits(decision, options);
  const deadline = startDeadline(decision.hostId, timeoutMs, options.signal);
  try {
    return await run(decision, options, { ...limits, signal: deadline.signal });
  } finally {
    deadline.dispose();
  }
}

const MAX_TIMER_MS = 2_147_483_647;

function readLimits(decision: AllowedCall, options: SendOutboundOptions) {
  const timeoutMs = positiveInt(
    options.timeoutMs ?? decision.host.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    'timeoutMs',
    MAX_TIMER_MS,
  );
  return {
    timeoutMs,
    connectTimeoutMs: positiveInt(options.connectTimeoutMs ?? timeoutMs, 'connectTimeoutMs', MAX_TIMER_MS),
    maxResponseBytes: positiveInt(options.maxResponseBytes, 'maxResponseBytes', Number.MAX_SAFE_INTEGER, 0),
    maxRedirects: positiveInt(options.maxRedirects ?? MAX_REDIRECTS, 'maxRedirects', MAX_REDIRECTS, 0),
  };
}

/** One signal for the whole call: aborted with POLICY_TIMEOUT at the deadline, or with the caller's reason. */
function startDeadline(hostId: string, timeoutMs: number, outer: AbortSignal | undefined) {
  const ac = new AbortController();
  const timer = setTimeout(() => {
    const message = `host ${hostId}: the call took longer than ${timeoutMs} ms`;
    ac.abort(new PolicyError('POLICY_TIMEOUT', message, { details: { hostId, rule: 'total-timeout' } }));
  }, timeoutMs);
  const onAbort = () => ac.abort(outer?.reason);
  if (outer?.aborted === true) onAbort();
  outer?.addEventListener('abort', onAbort, { once: true });
  const dispose = () => {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  };
  return { signal: ac.signal, dispose };
}

interface RunLimits {
  readonly connectTimeoutMs: number;
  readonly maxResponseBytes: number;
  readonly maxRedirects: number;
  readonly signal: AbortSignal;
}

async function run(
  first: AllowedCall,
  options: SendOutboundOptions,
  limits: RunLimits,
): Promise<OutboundResponse> {
  const lookup = options.lookup ?? systemLookup;
  let body = typeof options.body === 'string' ? new TextEncoder().encode(options.body) : options.body;
  let current = first;
  for (let hops = 0; ; hops++) {
    if (limits.signal.aborted) throw asError(limits.signal.reason);
    const address = await resolveChecked(current.host, lookup, limits.signal);
    const res = await sendHop({
      ...limits,
      host: current.host,
      address,
      method: current.method,
      target: current.pathname + current.search,
      headers: current.headers,
      body,
    });
    const next = nextHop(current, res, hops, limits.maxRedirects);
    if (next === undefined) return { ...res, url: current.url, redirects: hops };
    if (next.method !== current.method) body = undefined;
    current = next;
  }
}
