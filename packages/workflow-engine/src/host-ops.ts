import { createHash } from 'node:crypto';
import { EngineError } from './errors.js';
import type { RunContext } from './run-context.js';
import { authCall, registerAuthHeaderValue, requireAuth, restrictedData } from './auth-ops.js';
import { sendToStep, sendToStepAndForget } from './send-ops.js';
import { sendToDeployment } from './deployment-ops.js';
import { addSplitReturnItem } from './split-ops.js';
import { packagerCall } from './packager-ops.js';
import { PERSIST_OPS, deferMetric, persistedDelta } from './persist-ops.js';
import { CRYPTO_OPS } from './crypto-ops.js';
import { FILE_OPS } from './file-ops.js';
import { integerArg, notA, numberArg, parseHostArgs, stringArg } from './host-args.js';
import { EarlyAnswer } from './early-answer.js';
import { declaredDimensions } from './metric-dimensions.js';

/** Longest single `sleep(ms)`; and the sum of sleeps one processor run may do. */
export const MAX_SLEEP_MS = 10_000;
export const MAX_SLEEP_TOTAL_MS = 30_000;
/** Longest log message and metric key passed on (longer ones are cut). */
export const MAX_LOG_CHARS = 65_536;
export const MAX_METRIC_KEY_CHARS = 256;

type Args = unknown[];
type Op = (ctx: RunContext, args: Args, bytes: Uint8Array | undefined, text: string | undefined) => unknown;

const str = (args: Args, i: number, what: string): string => stringArg(args[i], what);
const num = (args: Args, i: number, what: string): number => numberArg(args[i], what);

function log(ctx: RunContext, args: Args): void {
  const level = args[0] === 'warn' || args[0] === 'error' ? args[0] : 'info';
  const source = args[1] === 'diagnostic' ? 'diagnostic' : 'console';
  const text = typeof args[2] === 'string' ? args[2] : String(args[2]);
  const message = ctx.shared.secrets.scrubPrefix(text, MAX_LOG_CHARS);
  ctx.shared.host.log({ level, message, stepId: ctx.step.stepId, source });
}

/**
 * docs/interfaces.md §5.5: secrets are stripped out of metric keys and dimensions. The dimensions are those the
 * processor's data declares (`data.metadata`, else `ad` from `data.ad`: metric-dimensions.ts), then the explicit
 * ones, which win (SPEC.md §7).
 */
function metric(ctx: RunContext, args: Args): void {
  const strip = (s: string): string => ctx.shared.secrets.strip(s);
  const named = str(args, 1, 'sendMetric: key');
  const key = strip(named).slice(0, MAX_METRIC_KEY_CHARS);
  const value = num(args, 2, 'sendMetric: value');
  const timestamp = typeof args[0] === 'number' && Number.isFinite(args[0]) ? args[0] : ctx.shared.host.now();
  const dimensions = Object.create(null) as Record<string, string>;
  for (const [k, v] of declaredDimensions(ctx.data, named)) dimensions[strip(k)] = strip(v);
  const dims = args[3];
  if (dims !== null && dims !== undefined) {
    if (typeof dims !== 'object' || Array.isArray(dims)) throw notA('sendMetric: dims', 'an object', dims);
    for (const [k, v] of Object.entries(dims)) dimensions[strip(k)] = strip(String(v));
  }
  if (!deferMetric(ctx, { key, value, timestamp, dimensions }))
    ctx.shared.host.metric({ key, value, timestamp, dimensions });
}

function stepPropsFor(ctx: RunContext): Map<string, string> {
  let m = ctx.shared.stepProps.get(ctx.step.uid);
  if (!m) ctx.shared.stepProps.set(ctx.step.uid, (m = new Map<string, string>()));
  return m;
}

function authPropsGet(ctx: RunContext, args: Args): string | null {
  requireAuth(ctx, 'getAuthenticationPropertiesFromStep');
  const step = ctx.shared.stepKey(
    str(args, 0, 'getAuthenticationPropertiesFromStep: stepId'),
    ctx.step.workflowIndex,
  );
  const entry = ctx.shared.authProps.get(
    `${step}\u0000${str(args, 1, 'getAuthenticationPropertiesFromStep: name')}`,
  );
  if (!entry || entry.expiresAt <= ctx.shared.host.now()) return null;
  return entry.value;
}

function authPropsSet(ctx: RunContext, args: Args): void {
  requireAuth(ctx, 'setAuthenticationPropertiesOnStep');
  const step = ctx.shared.stepKey(
    str(args, 0, 'setAuthenticationPropertiesOnStep: stepId'),
    ctx.step.workflowIndex,
  );
  const key = `${step}\u0000${str(args, 2, 'setAuthenticationPropertiesOnStep: name')}`;
  const ttl = Math.max(0, num(args, 1, 'setAuthenticationPropertiesOnStep: ttlMs'));
  const value = args[3] === null ? null : str(args, 3, 'setAuthenticationPropertiesOnStep: json');
  if (value === null) ctx.shared.authProps.delete(key);
  else ctx.shared.authProps.set(key, { value, expiresAt: ctx.shared.host.now() + ttl });
  // Cached credentials are as secret as the headers made from them.
  if (value !== null) ctx.shared.secrets.addText(value);
}

async function sleep(ctx: RunContext, args: Args): Promise<void> {
  const ms = Math.min(MAX_SLEEP_MS, Math.max(0, num(args, 0, 'sleep: ms')));
  if (ctx.sleptMs + ms > MAX_SLEEP_TOTAL_MS) {
    throw new EngineError('ENGINE_LIMIT', `sleep: more than ${MAX_SLEEP_TOTAL_MS} ms in one processor run`);
  }
  ctx.sleptMs += ms;
  const host = ctx.shared.host;
  const signal = ctx.shared.disposal;
  if (signal.aborted) throw disposedDuringSleep();
  // A disposed engine's runs end now, not when their sleeps do: the timer is cleared (nothing keeps the process up).
  await new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(disposedDuringSleep());
    };
    const done = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (host.sleep)
      host.sleep(ms).then(done, (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      });
    else timer = setTimeout(done, ms);
  });
}

function disposedDuringSleep(): EngineError {
  return new EngineError('ENGINE_DISPOSED', 'the workflow engine was disposed during sleep');
}

/** Counters and deltas of an authentication context are its own: nothing flows back through them (ADR 0054). */
const scope = (ctx: RunContext): string => (ctx.isAuth ? `\u0001${ctx.step.uid}` : ctx.step.uid);

function counter(ctx: RunContext, args: Args): number {
  const key = `${scope(ctx)}\u0000${str(args, 0, 'counter: key')}`;
  const next = (ctx.shared.counters.get(key) ?? 0) + num(args, 1, 'counter: delta');
  ctx.shared.counters.set(key, next);
  return next;
}

function delta(ctx: RunContext, args: Args): number {
  const name = str(args, 0, 'delta: key');
  const value = num(args, 1, 'delta: value');
  const persisted = persistedDelta(ctx, [name, value]);
  if (persisted !== undefined) return persisted;
  const key = `${scope(ctx)}\u0000${name}`;
  const prev = ctx.shared.deltas.get(key);
  ctx.shared.deltas.set(key, value);
  return value - (prev ?? 0); // a missing previous value counts as 0 (SPEC.md §7)
}

const OPS: Record<string, Op> = {
  log,
  metric,
  now: (ctx) => ctx.shared.host.now(),
  sleep,
  counter,
  delta,
  // -1: read to the end (`read()`, `readAll()`).
  'stream.read': (ctx, a) =>
    ctx.state.stream.read(integerArg(a[0], 'getStream().read: n', -1), ctx.shared.limits.memoryBytes),
  'stream.available': (ctx) => ctx.state.stream.available(),
  'stepProps.get': (ctx, a) => stepPropsFor(ctx).get(str(a, 0, 'getStepProperties().get: key')) ?? null,
  'stepProps.set': (ctx, a) => {
    // Step properties outlive the run and are readable by ordinary processors: no writes from auth context.
    if (ctx.isAuth)
      throw new EngineError(
        'ENGINE_NOT_PERMITTED',
        'step properties are read-only in an authentication context',
      );
    const k = str(a, 0, 'getStepProperties().set: key');
    if (a[1] === null) stepPropsFor(ctx).delete(k);
    else stepPropsFor(ctx).set(k, str(a, 1, 'getStepProperties().set: value'));
  },
  'stepProps.keys': (ctx) => [...stepPropsFor(ctx).keys()],
  // setHeader in an authentication context registers the value at once (S50), not when the processor ends.
  'auth.header': (ctx, a) => {
    requireAuth(ctx, 'setHeader secret registration');
    registerAuthHeaderValue(ctx.shared.secrets, str(a, 0, 'setHeader: value'));
    return null;
  },
  'authProps.get': authPropsGet,
  'authProps.set': authPropsSet,
  sha256: (_ctx, _a, bytes) =>
    new Uint8Array(
      createHash('sha256')
        .update(bytes ?? new Uint8Array(0))
        .digest(),
    ),
  sendToStep,
  sendToStepAndForget,
  sendToDeployment,
  restrictedData,
  authCall,
  'split.add': addSplitReturnItem,
  packager: packagerCall,
  ...PERSIST_OPS,
  ...CRYPTO_OPS,
  ...FILE_OPS,
};

/**
 * Answers one host call from a processor run. Every argument is checked here: the script can call the raw
 * channel with anything. Errors go back into the script as `CODE: message` with secrets scrubbed.
 */
export async function handleHostCall(
  ctx: RunContext,
  op: string,
  json: string,
  bytes: Uint8Array | undefined,
  text?: string,
): Promise<unknown> {
  const fn = Object.prototype.hasOwnProperty.call(OPS, op) ? OPS[op] : undefined;
  try {
    if (!fn)
      throw new EngineError('ENGINE_UNSUPPORTED', `unknown host call ${JSON.stringify(op.slice(0, 40))}`);
    const value = await fn(ctx, parseHostArgs(json), bytes, text);
    if (!(value instanceof EarlyAnswer)) return value;
    // The rest's error, if any, fails the run as it ends: scrubbed as any other.
    return new EarlyAnswer(value.value, () => {
      try {
        value.rest();
      } catch (err) {
        throw scrubbed(ctx, err);
      }
    });
  } catch (err) {
    throw scrubbed(ctx, err);
  }
}

/** A host call's error as the script sees it: its text with every registered secret scrubbed. */
function scrubbed(ctx: RunContext, err: unknown): Error {
  return new Error(ctx.shared.secrets.scrub(ctx.errorText(err)));
}
