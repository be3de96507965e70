import type { Server } from 'node:http';
import type { DeploymentRecord } from '@org/workflow-compiler';
import {
  RepeatLimiter,
  type DeploymentCall,
  type OutboundResponse,
  type Redactor,
  type StepInput,
  type StepResult,
  type WorkflowEngine,
} from '@org/workflow-engine';
import { AgentError, isCodedError, type AgentErrorCode } from '../errors.js';
import type { HttpRunCounters } from '../http/http-runs.js';
import type { RunTracker } from '../http/run-tracker.js';
import type { Output } from '../output.js';
import { DeferredEngine } from './deferred-engine.js';
import { grantsOf, receivingFrom, type CallGrant, type Grants } from './grants.js';
import { exchangeInProc, type InProcRequest } from './in-proc.js';
import { receiversOf, type Receiver } from './receivers.js';

/** Run properties a `deploymentAccess`-triggered step gets: set by the runtime, never from the caller's data. */
export const DEPLOYMENT_ACCESS_PROPERTIES = {
  /** The calling deployment's id. */
  deploymentId: 'deploymentAccess.deploymentId',
  /** The receiving deployment's `receive` entry that let the call in. */
  id: 'deploymentAccess.id',
} as const;

/**
 * In-process HTTP exchanges in flight in one runtime: a workflow that calls its own server in a loop (each hop
 * waiting for the next) is cut off here instead of growing until its outbound timeouts fire.
 */
export const MAX_IN_PROC_IN_FLIGHT = 64;

/** Identical refusals are logged once, then summarised once a minute (as the scheduler does, ADR 0056). */
const REFUSAL_REPEAT_MS = 60_000;

/** Where an `inProc` host points: a trigger server, of the caller's own deployment unless another is named. */
export interface InProcTarget {
  readonly serverId: string;
  readonly deploymentId: string | undefined;
}

/** What one deployment's engine host may ask of the others; the caller id is bound by the runtime. */
export interface DeploymentCalls {
  /** `sendToStep(accessId, stepId, body)`. */
  send(callerId: string, call: DeploymentCall): Promise<StepResult>;
  /** An allowed outbound call to an `inProc` host. */
  inProc(
    callerId: string,
    target: InProcTarget,
    req: InProcRequest,
    bounds: { readonly timeoutMs: number; readonly maxResponseBytes: number },
  ): Promise<OutboundResponse>;
}

interface Registered {
  readonly id: string;
  readonly grants: Grants;
  readonly engine: WorkflowEngine;
  /** Steps with a `deploymentAccess` trigger, by stepId. */
  readonly receivers: ReadonlyMap<string, readonly Receiver[]>;
  /** HTTP trigger servers by id, `inProcOnly` ones included. */
  readonly http: Map<string, Server>;
}

interface Match {
  readonly target: Registered;
  readonly receiver: Receiver;
  readonly receiveId: string;
}

const quote = (s: string) => JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);

function erroredResult(err: unknown): StepResult {
  const text = isCodedError(err) ? `${err.code}: ${err.message}` : 'the step run failed';
  return { status: undefined, body: undefined, headers: {}, properties: {}, errored: true, errors: [text] };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((r) => (timer = setTimeout(() => r(TIMED_OUT), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
const TIMED_OUT = Symbol('timedOut');

/** What the registry shares with the runtime. */
export interface RegistryDeps {
  readonly output: Output;
  readonly tracker: RunTracker;
  readonly redactor: Redactor;
  /** Counts each `deploymentAccess` run (the runtime's `step counters`). */
  readonly runs?: HttpRunCounters | undefined;
}

/**
 * The deployments of one runtime, as the others may reach them: `sendToStep(accessId, stepId, body)` across
 * deployments and `inProc` outbound calls. Every call is checked against both sides' grants (ADR 0079) with the
 * caller id the runtime bound to the caller's engine host; nothing the caller sends is trusted for identity.
 */
export class DeploymentRegistry implements DeploymentCalls {
  readonly #byId = new Map<string, Registered>();
  readonly #deps: RegistryDeps;
  readonly #refusals: RepeatLimiter<{ line: string; fields: Record<string, string> }>;
  #inProcInFlight = 0;
  #stopped = false;

  constructor(deps: RegistryDeps) {
    this.#deps = deps;
    this.#refusals = new RepeatLimiter({
      intervalMs: REFUSAL_REPEAT_MS,
      emit: ({ line, fields }, repeated) =>
        deps.output.warn(line, repeated > 0 ? { ...fields, repeated } : fields),
    });
  }

  /**
   * Registers a deployment and its engine.
   * @throws {@link AgentError} `AGENT_TRIGGER_INVALID` for a `deploymentAccess` trigger id that is not a
   *   `receive` entry of the record.
   */
  add(record: DeploymentRecord, engine: WorkflowEngine): void {
    const id = record.deploymentId;
    const grants = grantsOf(record);
    const receivers = receiversOf(id, engine, grants);
    this.#byId.set(id, { id, grants, engine, receivers, http: new Map() });
  }

  /** Makes an HTTP trigger server reachable in process (listening or `inProcOnly`). */
  addHttpServer(deploymentId: string, serverId: string, server: Server): void {
    this.#byId.get(deploymentId)?.http.set(serverId, server);
  }

  /** Refuses every later call (`AGENT_DEPLOYMENT_UNAVAILABLE`); runs in flight go on. */
  stop(): void {
    this.#stopped = true;
  }

  async send(callerId: string, call: DeploymentCall): Promise<StepResult> {
    const fields = {
      deploymentId: callerId,
      accessId: call.accessId.slice(0, 200),
      stepId: call.stepId.slice(0, 200),
    };
    if (this.#stopped)
      throw this.#refuse(fields, 'AGENT_DEPLOYMENT_UNAVAILABLE', 'stopping', 'the runtime is stopping');
    const grant = this.#byId.get(callerId)?.grants.call.get(call.accessId);
    if (grant === undefined)
      throw this.#refuse(
        fields,
        'AGENT_DEPLOYMENT_ACCESS_DENIED',
        'caller-grant',
        `deployment "${callerId}" has no allowDeploymentAccess call entry ${quote(call.accessId)}`,
      );
    const match = this.#match(callerId, call, grant, fields);
    await this.#ready(match.target, grant, fields);
    return this.#run(callerId, match, call);
  }

  #match(callerId: string, call: DeploymentCall, grant: CallGrant, fields: Record<string, string>): Match {
    const loaded = grant.targets.flatMap((t) => this.#byId.get(t) ?? []);
    if (loaded.length === 0)
      throw this.#refuse(
        fields,
        'AGENT_DEPLOYMENT_UNAVAILABLE',
        'not-loaded',
        `no deployment listed by call entry ${quote(call.accessId)} is loaded`,
      );
    const matches: Match[] = [];
    for (const target of loaded) {
      const open = new Set(receivingFrom(target.grants, callerId).map((g) => g.id));
      for (const receiver of target.receivers.get(call.stepId) ?? []) {
        const receiveId = receiver.ids.find((id) => open.has(id));
        if (receiveId !== undefined) matches.push({ target, receiver, receiveId });
      }
    }
    // One message whatever the receiving side lacks (grant, step or trigger): the caller learns no more.
    if (matches.length === 0)
      throw this.#refuse(
        fields,
        'AGENT_DEPLOYMENT_ACCESS_DENIED',
        'receiver-grant',
        `step ${quote(call.stepId)} does not receive calls from deployment "${callerId}" through ${quote(call.accessId)}`,
      );
    if (matches.length > 1)
      throw this.#refuse(
        fields,
        'AGENT_DEPLOYMENT_CALL_AMBIGUOUS',
        'ambiguous',
        `step ${quote(call.stepId)} receives calls through ${quote(call.accessId)} in ${matches.length} places (${matches.map((m) => `"${m.target.id}"`).join(', ')})`,
      );
    return matches[0]!;
  }

  /** A `deferLoading` target is created now; the caller waits up to its `startupWaitTimeoutMs`. */
  async #ready(target: Registered, grant: CallGrant, fields: Record<string, string>): Promise<void> {
    const engine = target.engine;
    if (!(engine instanceof DeferredEngine) || engine.isBuilt) return;
    const wait = grant.startupWaitTimeoutMs;
    const built = engine.build().then(
      () => undefined,
      (err: unknown) => err,
    );
    const outcome = await (wait === undefined ? built : withTimeout(built, wait));
    if (outcome === TIMED_OUT)
      throw this.#refuse(
        fields,
        'AGENT_DEPLOYMENT_UNAVAILABLE',
        'startup-wait',
        `deployment "${target.id}" did not finish loading within ${wait} ms`,
      );
    if (outcome !== undefined)
      throw this.#refuse(
        fields,
        'AGENT_DEPLOYMENT_UNAVAILABLE',
        'load-failed',
        `deployment "${target.id}" could not be loaded (${isCodedError(outcome) ? outcome.code : 'INTERNAL'})`,
      );
  }

  async #run(callerId: string, m: Match, call: DeploymentCall): Promise<StepResult> {
    const input: StepInput = {
      body: call.body,
      stream: undefined,
      headers: {},
      properties: {
        [DEPLOYMENT_ACCESS_PROPERTIES.deploymentId]: callerId,
        [DEPLOYMENT_ACCESS_PROPERTIES.id]: m.receiveId,
      },
    };
    const started = performance.now();
    const done = this.#deps.runs?.start(m.target.id, m.receiver.ref.stepId);
    const result = await this.#deps.tracker
      .track(() => m.target.engine.runStep(m.receiver.ref, input, { depth: call.depth }))
      .catch((err: unknown) => erroredResult(err));
    done?.(result.errored);
    if (!m.receiver.noTrace)
      this.#deps.output.debug('step run', {
        deploymentId: m.target.id,
        stepId: m.receiver.ref.stepId,
        trigger: 'deploymentAccess',
        caller: callerId,
        durationMs: Math.round(performance.now() - started),
        outcome: result.errored ? 'errored' : 'ok',
      });
    return { ...result, errors: result.errors.map((e) => this.#deps.redactor.redact(e)) };
  }

  async inProc(
    callerId: string,
    target: InProcTarget,
    req: InProcRequest,
    bounds: { readonly timeoutMs: number; readonly maxResponseBytes: number },
  ): Promise<OutboundResponse> {
    const targetId = target.deploymentId ?? callerId;
    const fields = { deploymentId: callerId, target: targetId, server: target.serverId };
    const refuse = (code: AgentErrorCode, rule: string, message: string) =>
      this.#refuse(fields, code, rule, message, 'in-process call refused');
    if (this.#stopped) throw refuse('AGENT_DEPLOYMENT_UNAVAILABLE', 'stopping', 'the runtime is stopping');
    const t = this.#byId.get(targetId);
    if (t === undefined)
      throw refuse('AGENT_DEPLOYMENT_UNAVAILABLE', 'not-loaded', `deployment "${targetId}" is not loaded`);
    // S149: another deployment's servers only with its receive grant for the caller.
    if (targetId !== callerId && receivingFrom(t.grants, callerId).length === 0)
      throw refuse(
        'AGENT_DEPLOYMENT_ACCESS_DENIED',
        'receiver-grant',
        `deployment "${targetId}" does not receive calls from deployment "${callerId}"`,
      );
    const server = t.http.get(target.serverId);
    if (server === undefined)
      throw refuse(
        'AGENT_DEPLOYMENT_UNAVAILABLE',
        'server',
        `deployment "${targetId}" has no http trigger server "${target.serverId}"`,
      );
    if (this.#inProcInFlight >= MAX_IN_PROC_IN_FLIGHT)
      throw refuse(
        'AGENT_DEPLOYMENT_UNAVAILABLE',
        'in-flight',
        `more than ${MAX_IN_PROC_IN_FLIGHT} in-process calls in flight`,
      );
    this.#inProcInFlight++;
    try {
      return await exchangeInProc(server, req, { callerId, ...bounds });
    } finally {
      this.#inProcInFlight--;
    }
  }

  #refuse(
    fields: Record<string, string>,
    code: AgentErrorCode,
    rule: string,
    message: string,
    line = 'deployment call refused',
  ): AgentError {
    const all = { ...fields, code, rule };
    const now = Date.now();
    this.#refusals.flush(now);
    this.#refusals.submit(`${line}\u0000${JSON.stringify(all)}`, { line, fields: all }, now);
    return new AgentError(code, message);
  }
}
