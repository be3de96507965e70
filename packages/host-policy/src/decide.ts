import { isAddressKindAllowed } from './address.js';
import { matchAllowList } from './allow-list.js';
import type { CompiledHost, HostPolicy } from './compile.js';
import type { PolicyErrorCode } from './errors.js';
import { mergeHeaders } from './headers.js';
import type { HttpMethod } from './methods.js';
import { normalizeMethod } from './methods.js';
import { composePath } from './path.js';
import type { Refusal } from './refusal.js';
import { refusal } from './refusal.js';

/** An outbound call as a workflow prepared it (`setUrl(hostId, path)`, `setHttpMethod`, `setHeader`). */
export interface OutboundCall {
  /** Exact host id (no case folding). */
  readonly hostId: string;
  /** Path relative to the host's base path; may carry a `?query`. */
  readonly path: string;
  /** Any letter case; sent upper case. */
  readonly method: string;
  /** True only when the call comes from the step's `authenticationProcessor`. */
  readonly isAuthenticationProcessor?: boolean;
  /** Workflow headers; fixed host headers win (SPEC.md §6). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An allowed call: everything `sendOutbound` needs. `headers` holds fixed header values: do not log it. */
export interface AllowedCall {
  readonly allowed: true;
  readonly hostId: string;
  readonly transport: 'http' | 'inProc';
  /** Absolute URL for `http` hosts; pathname plus query for `inProc` hosts. */
  readonly url: string;
  /** Full pathname, base path included: what allowList patterns were matched against. */
  readonly pathname: string;
  /** The query including `?`, or ''. Not matched by the allowList. */
  readonly search: string;
  readonly method: HttpMethod;
  /** Merged headers, lower-case names, null prototype. */
  readonly headers: Readonly<Record<string, string>>;
  /** Lower-case names of workflow headers dropped because a fixed host header has the same name (S37). */
  readonly droppedHeaders: readonly string[];
  /** The compiled host, for `sendOutbound` (address policy, redirects, timeout). */
  readonly host: CompiledHost;
}

/** A refused call, as data (docs/engineering.md §2): the code, the host id and the rule that refused it. */
export interface DeniedCall {
  readonly allowed: false;
  readonly code: PolicyErrorCode;
  readonly hostId: string;
  readonly rule: string;
  readonly message: string;
}

/** Result of {@link checkOutboundCall}. */
export type OutboundDecision = AllowedCall | DeniedCall;

const R = {
  unknown: refusal('POLICY_HOST_UNKNOWN', 'host-id', 'no host with this id is configured'),
  auth: refusal(
    'POLICY_HOST_NOT_ALLOWED',
    'authentication-host',
    'an authentication host is callable only from an authentication processor',
  ),
  literal: refusal('POLICY_PRIVATE_ADDRESS', 'address-policy', 'the host address is not a public address'),
  method: refusal(
    'POLICY_METHOD_NOT_ALLOWED',
    'method-unsupported',
    'the method is not one of GET HEAD POST PUT DELETE OPTIONS PATCH',
  ),
  pathType: refusal('POLICY_PATH_INVALID', 'path-type', 'the path is not a string'),
  allowMethod: refusal(
    'POLICY_METHOD_NOT_ALLOWED',
    'allow-list-method',
    'no allowList entry allows this method here',
  ),
  allowPath: refusal('POLICY_PATH_NOT_ALLOWED', 'allow-list-path', 'no allowList entry matches this path'),
  headersType: refusal('POLICY_HEADER_INVALID', 'headers-type', 'the headers are not an object'),
} as const;

function deny(hostId: string, r: Refusal): DeniedCall {
  return { allowed: false, code: r.code, hostId, rule: r.rule, message: `host ${hostId}: ${r.message}` };
}

/**
 * Decides a call against one compiled host (the steps of SPEC.md §8 after the host lookup). Used by
 * {@link checkOutboundCall} and for redirect re-checks.
 */
export function checkHostCall(host: CompiledHost, call: OutboundCall): OutboundDecision {
  const id = host.id;
  if (host.authenticationHost && call.isAuthenticationProcessor !== true) return deny(id, R.auth);
  const literal = host.base?.literalKind;
  if (literal !== undefined && !isAddressKindAllowed(literal, host.allowPrivateNetwork))
    return deny(id, R.literal);
  const method = normalizeMethod(call.method);
  if (method === undefined) return deny(id, R.method);
  if (typeof call.path !== 'string') return deny(id, R.pathType);
  const composed = composePath(host, call.path);
  if ('code' in composed) return deny(id, composed);
  if (host.allowList !== undefined) {
    const outcome = matchAllowList(host.allowList, method, composed.pathname);
    if (outcome !== 'allowed') return deny(id, outcome === 'method' ? R.allowMethod : R.allowPath);
  }
  const wh = call.headers;
  if (wh !== undefined && (typeof wh !== 'object' || wh === null || Array.isArray(wh)))
    return deny(id, R.headersType);
  const merged = mergeHeaders(host.headers, wh);
  if ('code' in merged) return deny(id, merged);
  const rel = composed.pathname + composed.search;
  return {
    allowed: true,
    hostId: id,
    transport: host.transport,
    url: host.base === undefined ? rel : host.base.origin + rel,
    pathname: composed.pathname,
    search: composed.search,
    method,
    headers: merged.headers,
    droppedHeaders: merged.dropped,
    host,
  };
}

/**
 * Decides an outbound call (docs/interfaces.md §6.3, SPEC.md §8). Pure and allocation-light: a map lookup by exact
 * id, one scan of the path, precompiled anchored regexes. A refusal is returned as data, never thrown.
 *
 * @throws TypeError when `policy` is not a compiled {@link HostPolicy} or `call` is not an object
 */
export function checkOutboundCall(policy: HostPolicy, call: OutboundCall): OutboundDecision {
  if (typeof call !== 'object' || call === null) throw new TypeError('call must be an object');
  const hosts: unknown = (policy as HostPolicy | undefined)?.hosts;
  if (!(hosts instanceof Map)) throw new TypeError('policy must come from compileHostPolicy');
  const host = typeof call.hostId === 'string' ? policy.hosts.get(call.hostId) : undefined;
  if (host === undefined) return deny(String(call.hostId), R.unknown);
  return checkHostCall(host, call);
}
