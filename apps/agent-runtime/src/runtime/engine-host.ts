import { checkOutboundCall, sendOutbound, type HostPolicy, type LookupFunction } from '@org/host-policy';
import type { DeploymentRecord } from '@org/workflow-compiler';
import type { EngineHost, OutboundRequest, OutboundResponse, Redactor } from '@org/workflow-engine';
import { isCodedError } from '../errors.js';
import type { Output } from './output.js';
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
}

/** A coded error as the engine expects it: `{ code, message }`, no stack details from us. */
class OutboundError extends Error {
  override readonly name = 'PolicyError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
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
    throw new OutboundError(
      decision.code,
      `call to host "${decision.hostId}" refused (${decision.rule}): ${decision.message}`,
    );
  }
  return decision;
}

async function callOutbound(deps: EngineHostDeps, req: OutboundRequest): Promise<OutboundResponse> {
  const decision = decide(deps.policy, req);
  const host = decision.host;
  try {
    const res = await sendOutbound(decision, {
      body: req.body,
      timeoutMs: req.timeoutMs ?? host.timeoutMs ?? deps.outbound.timeoutMs,
      maxResponseBytes: deps.outbound.maxResponseBytes,
      ...(deps.lookup === undefined ? {} : { lookup: deps.lookup }),
      // The engine aborts calls it no longer waits for (a split step past its deadline).
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    });
    const headers: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(res.headers)) headers[k] = [...v];
    return { status: res.status, headers, body: res.body };
  } catch (err) {
    if (isCodedError(err)) throw new OutboundError(err.code, deps.redactor.redact(err.message));
    throw new OutboundError('POLICY_CONNECT_FAILED', `call to host "${req.hostId}" failed`);
  }
}

/** The agent side of the engine contract for one deployment. */
export function createEngineHost(deps: EngineHostDeps): EngineHost {
  const id = deps.record.deploymentId;
  return {
    callOutbound: (req) => callOutbound(deps, req),
    getRestrictedData: (hostId) =>
      Promise.resolve().then(() => readRestrictedData(deps.record, hostId, deps.decryptor, deps.redactor)),
    // The engine registers into the same redactor already; what it registers at run time stays evictable.
    registerSecret: (value) => deps.redactor.add(value, { evictable: true }),
    log: (entry) => deps.output.workflowLog(id, entry),
    metric: (m) => deps.output.metric(id, m),
    now: deps.now ?? Date.now,
  };
}
