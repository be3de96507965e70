import { carriesRestricted } from './restricted.js';
import { EngineError, codeOf } from './errors.js';
import { registerAuthHeaderValue } from './auth-ops.js';
import { handleHostCall } from './host-ops.js';
import { beginStep, settleStep, writeBuffer } from './persist-ops.js';
import type { PersistentStore } from './persistence/types.js';
import { errorText, type EngineShared, type RunContext } from './run-context.js';
import { applyOutput, initialState, normalizeHeaders, sandboxInput, type RunState } from './run-state.js';
import { scrubResponse } from './response-scrub.js';
import { runInSandbox } from './sandbox.js';
import { ByteStream } from './byte-stream.js';
import { untilAborted } from './abort.js';
import { runSplitFlow, SPLIT_STEP_TYPE } from './split-runner.js';
import { packagerSlot, type PackagerSlot } from './packager-ops.js';
import type { SplitItems } from './split-ops.js';
import type { OutboundRequest, StepInput, StepResult } from './types.js';
import type { ProcessorSlot, ScriptUnit, StepModel } from './workflow-model.js';

const CONNECT_FAILED = new Set(['POLICY_CONNECT_FAILED', 'POLICY_TIMEOUT']);
const utf8 = new TextDecoder('utf-8');

export interface Flow {
  shared: EngineShared;
  step: StepModel;
  state: RunState;
  depth: number;
  /** True when a parent run holds a worker while waiting for this one (sendToStep). */
  nested: boolean;
  /** Headers the authenticationProcessor set: sent on the main call only, never shown to other processors. */
  authHeaders: Record<string, [string, string]>;
  /** Items of a split-aggregate step, while its splitGenerator runs. */
  split?: SplitItems | undefined;
  /** The properties ordinary processors left when the authentication context began (auth-flow.ts). */
  authBaseline?: Readonly<Record<string, string>> | undefined;
  /** Aborted at the deadline of a split-aggregate step: no further processor or call starts (split-runner.ts). */
  signal?: AbortSignal | undefined;
  /** The step run's view of its store (persist-ops.ts `beginStep`); split items share it. */
  store?: PersistentStore | undefined;
  /**
   * A urlGenerator of this cycle set the body, or the step has a payloadGenerator (which ran): only then is it the
   * outbound body (README "Step flow", SPEC.md §4.3). Otherwise the input body — a `sendToStep` message, a trigger's
   * request, a split item — is not sent.
   */
  bodySet?: boolean | undefined;
  /** The held packager request of the step run and its answer (packager-ops.ts); split items share it. */
  packager?: PackagerSlot | undefined;
}

/** Runs one processor script; false when the step must stop (script error or `end()`). */
async function runUnit(
  flow: Flow,
  unit: ScriptUnit,
  mode: ProcessorSlot | 'httpStatusHandling',
): Promise<boolean> {
  const { shared, step, state } = flow;
  if (flow.signal?.aborted) return false; // the split reports the deadline (split-runner.ts)
  const isAuth = mode === 'authenticationProcessor' || step.type === 'scripted-auth';
  const ctx: RunContext = {
    shared,
    step,
    state,
    isAuth,
    data: unit.data,
    depth: flow.depth,
    sleptMs: 0,
    errorText,
    signal: flow.signal,
    store: flow.store,
    split: mode === 'splitGenerator' ? flow.split : undefined,
    authBaseline: isAuth ? flow.authBaseline : undefined,
    packager: flow.packager,
  };
  const view = { mode, auth: isAuth, data: unit.data, timestampOverride: step.timestampOverride ?? null };
  const writeLimits = writeBuffer(ctx); // the realm's write buffer (persist-ops.ts)
  const outcome = await runInSandbox(
    {
      realm: shared.realm,
      script: unit.script,
      input: sandboxInput(state, { ...view, writeLimits }),
      inBytes: state.bytes,
      memoryBytes: shared.limits.memoryBytes,
      timeMs: shared.limits.timeMs,
      maxStackBytes: shared.limits.maxStackBytes,
    },
    (op, json, bytes, text) => handleHostCall(ctx, op, json, bytes, text),
    flow.nested,
  );
  try {
    const out = applyOutput(state, outcome.output, outcome.outBytes);
    if (out.bodySet && (mode === 'urlGenerator' || mode === 'payloadGenerator')) flow.bodySet = true;
  } catch {
    // The script tampered with what the prelude serialises (e.g. Object.prototype.toJSON).
    state.errors.push(`${mode}: ENGINE_SCRIPT_ERROR: the processor left an unreadable run state`);
    return false;
  }
  // The write buffer's last batch, stored as the run ended (README "Persistence": write buffer).
  const writeError = await outcome.lastWrites;
  if (writeError !== undefined) state.errors.push(writeError);
  if (outcome.scriptError) {
    const { name, message } = outcome.scriptError;
    const text = `${mode}: ${name === 'Error' ? '' : `${name}: `}${message}`;
    state.errors.push(shared.secrets.scrub(text));
    return false;
  }
  return !state.ended && state.errors.length === 0;
}

async function runChain(
  flow: Flow,
  units: ScriptUnit[],
  mode: ProcessorSlot | 'httpStatusHandling',
): Promise<boolean> {
  for (const unit of units) if (!(await runUnit(flow, unit, mode))) return false;
  return true;
}

/**
 * Runs the authenticationProcessor on the prepared request. Only its headers survive: they are registered as
 * secrets and moved out of sight (sent on the main call only); its changes to body, properties, URL and method
 * are discarded, so restricted data has no way into a response or an ordinary processor.
 */
async function runAuth(flow: Flow, units: ScriptUnit[]): Promise<boolean> {
  const { state } = flow;
  const kept = {
    body: state.body,
    bytes: state.bytes,
    properties: { ...state.properties },
    url: state.url,
    method: state.method,
    inHeaders: state.inHeaders,
  };
  const before = { ...state.outHeaders };
  const outer = flow.authBaseline; // a scripted-auth step's own baseline stays for its later processors
  flow.authBaseline = outer ?? kept.properties;
  const ok = await runChain(flow, units, 'authenticationProcessor');
  flow.authBaseline = outer;
  for (const [k, pair] of Object.entries(state.outHeaders)) {
    if (before[k]?.[1] === pair[1]) continue;
    registerHeaderSecret(flow, pair[1]);
    flow.authHeaders[k] = pair;
    delete state.outHeaders[k];
  }
  Object.assign(state, kept);
  return ok;
}

function registerHeaderSecret(flow: Flow, value: string): void {
  registerAuthHeaderValue(flow.shared.secrets, value);
}

function outboundRequest(flow: Flow, url: { hostId: string; path: string }): OutboundRequest {
  const { state } = flow;
  const body = flow.bodySet ? (state.bytes ?? state.body ?? undefined) : undefined;
  const headers: Record<string, string> = Object.fromEntries(
    Object.values({ ...state.outHeaders, ...flow.authHeaders }),
  );
  const hasBody = body !== undefined && (typeof body === 'string' ? body.length > 0 : body.byteLength > 0);
  return {
    hostId: url.hostId,
    path: url.path,
    method: state.method ?? (hasBody ? 'POST' : 'GET'),
    headers,
    body,
    // A scripted-auth step exists to talk to authentication hosts (docs/interfaces.md §4.5).
    isAuthenticationProcessor: flow.step.type === 'scripted-auth',
    timeoutMs: flow.step.httpTimeout,
    signal: flow.signal,
  };
}

/** Restricted values of host H may go to H only (docs/security-requirements.md A.2, lazy decryption). */
/**
 * The `httpStatusHandling` entry for `status`: the exact key (`"404"`) when there is one, else the narrowest
 * inclusive range (`"400-499"`) that holds it, the first in the file on a tie (README "Step flow").
 */
function statusHandlerFor(step: StepModel, status: number): ScriptUnit[] | undefined {
  const exact = step.statusHandlers[String(status)];
  if (exact) return exact;
  let best: { width: number; units: ScriptUnit[] } | undefined;
  for (const [key, units] of Object.entries(step.statusHandlers)) {
    const m = /^([1-5][0-9][0-9])-([1-5][0-9][0-9])$/.exec(key);
    if (!m) continue;
    const from = Number(m[1]);
    const to = Number(m[2]);
    if (status < from || status > to) continue;
    if (!best || to - from < best.width) best = { width: to - from, units };
  }
  return best?.units;
}

async function outbound(
  flow: Flow,
  url: { hostId: string; path: string },
  results: 'resultsProcessor' | 'itemResultProcessor' = 'resultsProcessor',
): Promise<void> {
  const { state, step, shared } = flow;
  if (flow.signal?.aborted) return;
  const req = outboundRequest(flow, url);
  if (req.isAuthenticationProcessor)
    for (const v of Object.values(req.headers)) registerHeaderSecret(flow, v);
  if (carriesRestricted(flow.shared, req)) {
    state.errors.push('ENGINE_NOT_PERMITTED: the call would carry restricted host data to another host');
    return;
  }
  let res;
  try {
    res = await untilAborted(shared.host.callOutbound(req), flow.signal);
  } catch (err) {
    if (flow.signal?.aborted) return; // cut short by the split deadline, which split-runner.ts reports
    const code = codeOf(err);
    state.properties['http.error'] = code ?? 'ENGINE_OUTBOUND_FAILED';
    const handler = step.processors.httpConnectFailedProcessor;
    if (code !== undefined && CONNECT_FAILED.has(code) && handler) {
      Object.assign(state, {
        url: null,
        method: null,
        outHeaders: Object.create(null) as RunState['outHeaders'],
      });
      await runChain(flow, handler, 'httpConnectFailedProcessor');
      return;
    }
    state.errors.push(
      shared.secrets.scrub(code ? errorText(err) : 'ENGINE_OUTBOUND_FAILED: the outbound call failed'),
    );
    return;
  }
  // The login response of a scripted-auth step is a credential (ADR 0054); any other response goes to ordinary
  // processors and must not hand them a credential the upstream echoed (ADR 0068).
  if (req.isAuthenticationProcessor) shared.secrets.addText(utf8.decode(res.body));
  else {
    try {
      res = scrubResponse(shared.secrets, res, req.hostId);
    } catch (err) {
      state.errors.push(errorText(err));
      return;
    }
  }
  Object.assign(state, {
    body: utf8.decode(res.body),
    bytes: undefined,
    stream: new ByteStream(res.body),
    inHeaders: normalizeHeaders(res.headers),
    outHeaders: Object.create(null) as RunState['outHeaders'],
    url: null,
    method: null,
  });
  state.properties['status_code'] = String(res.status);
  const byStatus = statusHandlerFor(step, res.status);
  const handler = byStatus ?? step.processors[results];
  if (handler) await runChain(flow, handler, byStatus ? 'httpStatusHandling' : results);
}

/** The call cycle; `results` is `itemResultProcessor` for one item of a split-aggregate step. */
async function runFlow(
  flow: Flow,
  results: 'resultsProcessor' | 'itemResultProcessor' = 'resultsProcessor',
): Promise<void> {
  if (results === 'resultsProcessor' && flow.step.type === SPLIT_STEP_TYPE)
    return runSplitFlow(flow, { runChain, runItem: (item) => runFlow(item, 'itemResultProcessor') });
  const p = flow.step.processors;
  if (p.urlGenerator && !(await runChain(flow, p.urlGenerator, 'urlGenerator'))) return;
  if (p.payloadGenerator) {
    if (!(await runChain(flow, p.payloadGenerator, 'payloadGenerator'))) return;
    // As the reference does: a step with a payloadGenerator sends the body as it leaves it, the passed message when
    // it sets none (real apps' payload generators are often only a comment, "forward the passed message").
    flow.bodySet = true;
  }
  if (p.authenticationProcessor && !(await runAuth(flow, p.authenticationProcessor))) return;
  const url = flow.state.url;
  if (url) return outbound(flow, url, results);
  const last = p[results];
  if (last) await runChain(flow, last, results);
}

/** A `scripted-auth` step's whole result is authentication output: every text in it is scrubbed. */
function toResult(flow: Flow): StepResult {
  const { state, shared, step } = flow;
  const clean = step.type === 'scripted-auth' ? (t: string) => shared.secrets.scrub(t) : (t: string) => t;
  const raw = state.properties['status_code'];
  const n = raw === undefined ? NaN : Number(raw.trim());
  // fromEntries defines own properties: a header or property named `__proto__` stays one (no prototype change).
  const headers: Record<string, string> = Object.fromEntries(
    Object.values(state.outHeaders).map(([name, value]) => [clean(name), clean(value)]),
  );
  const properties: Record<string, string> = Object.fromEntries(
    Object.entries(state.properties).map(([k, v]) => [clean(k), clean(v)]),
  );
  // A packager answer is the response, whatever the processors set after it (SPEC.md §7.6).
  const answer = flow.packager?.answer;
  if (answer !== undefined)
    return {
      status: answer.status,
      body: answer.body,
      headers: { ...answer.headers },
      properties,
      errored: state.errors.length > 0,
      errors: state.errors.map((e) => shared.secrets.scrub(e)),
    };
  return {
    status: Number.isInteger(n) && n >= 100 && n <= 999 ? n : undefined,
    body: state.bytes ? cleanBytes(flow, state.bytes) : state.body === null ? undefined : clean(state.body),
    headers,
    properties,
    errored: state.errors.length > 0,
    errors: state.errors.map((e) => shared.secrets.scrub(e)),
  };
}

/**
 * A binary body of a `scripted-auth` step is authentication output too (ADR 0054): when its UTF-8 reading holds a
 * secret, the body becomes that reading with the secrets replaced; other bytes pass unchanged.
 */
function cleanBytes(flow: Flow, bytes: Uint8Array): string | Uint8Array {
  if (flow.step.type !== 'scripted-auth') return bytes;
  const text = utf8.decode(bytes);
  const scrubbed = flow.shared.secrets.scrub(text);
  return scrubbed === text ? bytes : scrubbed;
}

/**
 * Runs one step (README.md "Step flow").
 *
 * @throws EngineError `ENGINE_TIMEOUT`, `ENGINE_MEMORY`, `ENGINE_SANDBOX_FAILED` from a processor run.
 */
export async function runStepFlow(
  shared: EngineShared,
  step: StepModel,
  input: StepInput,
  depth: number,
  nested: boolean,
): Promise<StepResult> {
  const flow: Flow = {
    shared,
    step,
    state: initialState(input),
    depth,
    nested,
    authHeaders: Object.create(null) as Flow['authHeaders'],
    packager: input.packagerRequest === undefined ? undefined : packagerSlot(input.packagerRequest),
  };
  if (step.type === 'scripted-auth') flow.authBaseline = { ...flow.state.properties };
  const run = beginStep(shared, step);
  flow.store = run?.store;
  try {
    await runFlow(flow);
  } catch (err) {
    if (err instanceof EngineError)
      throw new EngineError(err.code, shared.secrets.scrub(err.message), { cause: err });
    throw err;
  } finally {
    await settleStep(shared, step, flow.state, run);
  }
  return toResult(flow);
}
