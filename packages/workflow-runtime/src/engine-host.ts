import {
  PolicyError,
  checkOutboundCall,
  sendOutbound,
  type AllowedCall,
  type HostPolicy,
  type LookupFunction,
} from '@org/host-policy';
import type { DeploymentRecord } from '@org/workflow-compiler';
import type { EngineHost, OutboundRequest, OutboundResponse, Redactor } from '@org/workflow-engine';
import type { DeploymentCalls } from './deployments/registry.js';
import { isCodedError } from './errors.js';
import type { Output } from './output.js';
import { NO_METRICS, secondsSince, type OutboundOutcome, type RuntimeMetrics } from './observe/metrics.js';
import { currentRequestId } from './observe/request-id.js';
import { readRestrictedData, type StringDecryptor } from './secrets.js';

/** What one deployment's {@link EngineHost} needs. */
export interface EngineHostDeps {
  readonly record: DeploymentRecord;
  readonly policy: HostPolicy;
  readonly decryptor: StringDecryptor;
  readonly redactor: Redactor;
  readonly output: Output;
  readonly outbound: { readonly timeoutMs: number; readonly maxResponseBytes: number };
  /** DNS lookup for outbound calls (tests map names to loopback); default node:dns. */
  readonly lookup?: LookupFunction | undefined;
  readonly now?: () => number;
  /**
   * Replaces the network for every call the host policy allowed (the workflow test runner's mock server).
   * The policy still decides first; only `sendOutbound` is replaced.
   */
  readonly transport?: OutboundTransport | undefined;
  /**
   * The other deployments of the runtime: `sendToStep(accessId, stepId, body)` and `inProc` hosts. The host
   * passes its own record's id as the caller (ADR 0079, S148). Without it both are refused.
   */
  readonly calls?: DeploymentCalls | undefined;
  /** Where outbound calls are counted (by host id and outcome); default: nowhere. */
  readonly metrics?: RuntimeMetrics | undefined;
}

/** An allowed outbound call as a {@link OutboundTransport} gets it: the decided URL, method, merged headers. */
export interface TransportRequest {
  readonly url: string;
  readonly method: string;
  /** Merged headers (fixed host headers included), lower-case names. Holds secrets: never log it. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | string | undefined;
  /** Aborted when the call's time limit passes. */
  readonly signal: AbortSignal;
}

/** An in-process stand-in for the network (tests): answers an allowed call, or throws a coded error. */
export type OutboundTransport = (req: TransportRequest) => Promise<OutboundResponse>;

/**
 * Another package's coded error (the test runner's `TESTRUNNER_HOST_NOT_MOCKED`, an in-process call's
 * `AGENT_*`) as the engine gets it: its own name and code, its message redacted. No class here borrows a name.
 */
function redactedCopy(err: { name?: unknown; code: string }, message: string): Error & { code: string } {
  const name = typeof err.name === 'string' ? err.name : 'Error';
  return Object.assign(new Error(message), { name, code: err.code });
}

function decide(policy: HostPolicy, req: OutboundRequest) {
  const decision = checkOutboundCall(policy, {
    hostId: req.hostId,
    path: req.path,
    method: req.method,
    headers: req.headers,
    isAuthenticationProcessor: req.isAuthenticationProcessor,
  });
  if (!decision.allowed) {
    // The denial is data (host-policy); for the engine it becomes a coded error naming host and rule.
    throw new PolicyError(
      decision.code,
      `call to host "${decision.hostId}" refused (${decision.rule}): ${decision.message}`,
    );
  }
  return decision;
}

/** A coded error thrown by a transport keeps its code (e.g. the test runner's `TESTRUNNER_HOST_NOT_MOCKED`). */
function transportCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : undefined;
}

async function viaTransport(
  deps: EngineHostDeps,
  transport: OutboundTransport,
  decision: AllowedCall,
  req: OutboundRequest,
  timeoutMs: number,
): Promise<OutboundResponse> {
  const timeout = AbortSignal.timeout(timeoutMs);
  // The engine's own signal (a split step's deadline) aborts the call too.
  const signal = req.signal === undefined ? timeout : AbortSignal.any([timeout, req.signal]);
  let res: OutboundResponse;
  try {
    res = await transport({
      url: decision.url,
      method: decision.method,
      headers: decision.headers,
      body: req.body,
      signal,
    });
  } catch (err) {
    if (timeout.aborted)
      throw new PolicyError('POLICY_TIMEOUT', `call to host "${req.hostId}" timed out after ${timeoutMs} ms`);
    const code = transportCode(err);
    const text = err instanceof Error ? deps.redactor.redact(err.message) : 'failed';
    const message = `call to host "${req.hostId}" failed: ${text}`;
    if (code !== undefined) throw redactedCopy({ name: (err as { name?: unknown }).name, code }, message);
    throw new PolicyError('POLICY_CONNECT_FAILED', message);
  }
  if (res.body.byteLength > deps.outbound.maxResponseBytes)
    throw new PolicyError(
      'POLICY_RESPONSE_TOO_LARGE',
      `call to host "${req.hostId}": response body over ${deps.outbound.maxResponseBytes} bytes`,
    );
  return res;
}

/** An allowed call to an `inProc` host: to a trigger server of this or another deployment, with no port. */
async function viaInProc(
  deps: EngineHostDeps,
  decision: AllowedCall,
  req: OutboundRequest,
  timeoutMs: number,
): Promise<OutboundResponse> {
  const host = decision.host;
  if (deps.calls === undefined || host.inProcServerId === undefined)
    throw new PolicyError(
      'POLICY_CONNECT_FAILED',
      `call to host "${req.hostId}" failed: no in-process servers`,
    );
  try {
    return await deps.calls.inProc(
      deps.record.deploymentId,
      { serverId: host.inProcServerId, deploymentId: host.inProcDeploymentId },
      { path: decision.url, method: decision.method, headers: decision.headers, body: req.body },
      { timeoutMs, maxResponseBytes: deps.outbound.maxResponseBytes },
    );
  } catch (err) {
    if (isCodedError(err)) throw redactedCopy(err, deps.redactor.redact(err.message));
    throw new PolicyError('POLICY_CONNECT_FAILED', `call to host "${req.hostId}" failed`);
  }
}

/** The request id of the trigger request being handled travels on its outbound calls (unless a host header sets one). */
function withRequestIdHeader(decision: AllowedCall): AllowedCall {
  const id = currentRequestId();
  if (id === undefined || decision.headers['x-request-id'] !== undefined) return decision;
  return { ...decision, headers: { ...decision.headers, 'x-request-id': id } };
}

/** A bounded outcome label: the host policy refused, the call timed out, or it failed otherwise. */
function outcomeOf(err: unknown): OutboundOutcome {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'POLICY_TIMEOUT') return 'timeout';
  if (code === 'POLICY_CONNECT_FAILED' || code === 'POLICY_RESPONSE_TOO_LARGE') return 'error';
  return typeof code === 'string' && code.startsWith('POLICY_') ? 'refused' : 'error';
}

async function countedOutbound(deps: EngineHostDeps, req: OutboundRequest): Promise<OutboundResponse> {
  const started = performance.now();
  const metrics = deps.metrics ?? NO_METRICS;
  // The script names the host: an id the policy does not know is not a label value (unbounded).
  const report = (outcome: OutboundOutcome, known = true) =>
    metrics.outboundCall({
      deploymentId: deps.record.deploymentId,
      hostId: known ? req.hostId : '(unknown)',
      outcome,
      seconds: secondsSince(started),
    });
  try {
    const res = await callOutbound(deps, req);
    report('ok');
    return res;
  } catch (err) {
    report(outcomeOf(err), (err as { code?: unknown }).code !== 'POLICY_HOST_UNKNOWN');
    throw err;
  }
}

async function callOutbound(deps: EngineHostDeps, req: OutboundRequest): Promise<OutboundResponse> {
  const decision = withRequestIdHeader(decide(deps.policy, req));
  const host = decision.host;
  if (decision.transport === 'inProc')
    return viaInProc(deps, decision, req, req.timeoutMs ?? host.timeoutMs ?? deps.outbound.timeoutMs);
  if (deps.transport !== undefined)
    return viaTransport(
      deps,
      deps.transport,
      decision,
      req,
      req.timeoutMs ?? host.timeoutMs ?? deps.outbound.timeoutMs,
    );
  try {
    const res = await sendOutbound(decision, {
      body: req.body,
      timeoutMs: req.timeoutMs ?? host.timeoutMs ?? deps.outbound.timeoutMs,
      maxResponseBytes: deps.outbound.maxResponseBytes,
      ...(deps.lookup === undefined ? {} : { lookup: deps.lookup }),
      // The engine aborts calls it no longer waits for (a split step past its deadline).
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    });
    const headers = Object.create(null) as Record<string, string[]>; // a header named __proto__ stays a header
    for (const [k, v] of Object.entries(res.headers)) headers[k] = [...v];
    return { status: res.status, headers, body: res.body };
  } catch (err) {
    if (isCodedError(err)) throw redactedCopy(err, deps.redactor.redact(err.message));
    throw new PolicyError('POLICY_CONNECT_FAILED', `call to host "${req.hostId}" failed`);
  }
}

/** The agent side of the engine contract for one deployment. */
export function createEngineHost(deps: EngineHostDeps): EngineHost {
  const id = deps.record.deploymentId;
  const calls = deps.calls;
  return {
    callOutbound: (req) => countedOutbound(deps, req),
    getRestrictedData: (hostId) =>
      Promise.resolve().then(() => readRestrictedData(deps.record, hostId, deps.decryptor, deps.redactor)),
    // The engine registers into the same redactor already; what it registers at run time stays evictable.
    registerSecret: (value) => deps.redactor.add(value, { evictable: true }),
    log: (entry) => deps.output.workflowLog(id, entry),
    metric: (m) => deps.output.metric(id, m),
    now: deps.now ?? Date.now,
    // The caller is this host's own record, whatever the script passes (S148).
    ...(calls === undefined ? {} : { sendToDeployment: (call) => calls.send(id, call) }),
  };
}
