import { EngineError } from './errors.js';
import { badArgument, integerArg, notA, numberArg, stringArg } from './host-args.js';
import type { RunContext, EngineShared } from './run-context.js';
import { joinedLengths, joinedPairs, MAX_WRITE_BATCH } from './persistence/joined.js';
import type { PersistentStore } from './persistence/types.js';
import type { RunState } from './run-state.js';
import type { EngineHost } from './types.js';
import type { StepModel } from './workflow-model.js';
import { EarlyAnswer } from './early-answer.js';

type Args = unknown[];
type Op = (ctx: RunContext, args: Args, bytes?: Uint8Array, text?: string) => unknown;

/** Largest `take(n)`; the byte cap of the store applies too. */
export const MAX_TAKE_ITEMS = 10_000;
const MINUTE_MS = 60_000;
/**
 * Most pairs in one `persist.setMany` (the realm's write buffer flushes at 1000 pairs or 1 Mi characters, see
 * realm/prelude.ts); the host takes no more, whatever the script sends on the raw channel.
 */
export { MAX_WRITE_BATCH };

/**
 * The write buffer's last batch as the run ends ({@link batchOf}): stored, then the store starts committing what it
 * holds (also after a breach).
 */
function setLast(ctx: RunContext, args: Args, bytes: Uint8Array | undefined, text: string | undefined): null {
  const batch = batchOf(ctx, args, bytes, text);
  try {
    batch.store();
  } finally {
    batch.target.commit?.();
  }
  return null;
}

/**
 * The write buffer's flush at its bound, while the script waits for the answer. When the store admits the batch
 * (ADR 0123: no pair can breach a limit), the answer goes first and the batch is stored right after, so the
 * script's next writes overlap the storing. Otherwise the batch is stored first and a breach is thrown at the call.
 */
function flushMany(
  ctx: RunContext,
  args: Args,
  bytes: Uint8Array | undefined,
  text: string | undefined,
): EarlyAnswer | null {
  const batch = batchOf(ctx, args, bytes, text);
  if (batch.admits()) return new EarlyAnswer(null, batch.store);
  batch.store();
  return null;
}

const no = (): boolean => false;

interface Batch {
  /** The store written to. */
  target: PersistentStore;
  /** Stores the batch (a breach is thrown after the pairs before it are stored). */
  store: () => void;
  /** Whether the store takes the whole batch without an error ({@link PersistentStore.admitsJoined}). */
  admits: () => boolean;
}

/**
 * A `persist.setMany` call's pairs, every one checked before the store is reached (a malformed call stores
 * nothing): `[[key, value | null], …]`; or, with `text` (the realm's write buffer, ADR 0066, 0121), the keys and
 * then the values joined in `text`, their lengths in `bytes` ({@link joinedLengths}). A store with `setJoined`
 * takes the joined form as it is.
 */
function batchOf(
  ctx: RunContext,
  args: Args,
  bytes: Uint8Array | undefined,
  text: string | undefined,
): Batch {
  if (text !== undefined) {
    const lengths = joinedLengths(bytes, text);
    const target = writable(ctx, 'setPersistedItem');
    if (!target.setJoined)
      return { target, admits: no, store: () => setPairs(target, joinedPairs(lengths, text)) };
    return {
      target,
      admits: () => target.admitsJoined?.(lengths, text) === true,
      store: () => target.setJoined!(lengths, text),
    };
  }
  const list = args[0];
  if (!Array.isArray(list) || list.length > MAX_WRITE_BATCH)
    throw badArgument(`setMany: expected an array of at most ${MAX_WRITE_BATCH} pairs`);
  const pairs = list.map((p: unknown): [string, string | null] => {
    if (
      !Array.isArray(p) ||
      p.length !== 2 ||
      typeof p[0] !== 'string' ||
      (p[1] !== null && typeof p[1] !== 'string')
    )
      throw badArgument('setMany: expected [key, value or null] pairs of strings');
    return [p[0], p[1] as string | null];
  });
  const target = writable(ctx, 'setPersistedItem');
  return { target, admits: no, store: () => setPairs(target, pairs) };
}

function setPairs(store: PersistentStore, pairs: [string, string | null][]): void {
  if (store.setItems) store.setItems(pairs);
  else for (const [k, v] of pairs) store.setItem(k, v);
}

function str(args: Args, i: number, name: string): string {
  return stringArg(args[i], name);
}

function storeOf(ctx: RunContext, call: string): PersistentStore {
  const store = ctx.store;
  if (store) return store;
  throw new EngineError(
    'ENGINE_NO_PERSISTENCE',
    `${call} needs persistenceFile or persistence on step ${JSON.stringify(ctx.step.stepId.slice(0, 200))}`,
  );
}

/** A store to write to: persisted state outlives the run, so an authentication context only reads it. */
function writable(ctx: RunContext, call: string): PersistentStore {
  const store = storeOf(ctx, call);
  if (ctx.isAuth)
    throw new EngineError('ENGINE_NOT_PERMITTED', `${call} is read-only in an authentication context`);
  return store;
}

/** Epoch ms as a number or a string of digits (apps pass `key.toString()`), a safe integer. */
function timestamp(args: Args, i: number): number {
  const v = args[i];
  const n =
    typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?[0-9]{1,16}\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n))
    throw notA(
      'getTimestampManager().set: ts',
      'epoch milliseconds (a safe integer, or a string of its digits)',
      v,
    );
  return n;
}

function finite(args: Args, i: number, name: string): number {
  return numberArg(args[i], name);
}

/** `delta(key, value)` on a step with persistence (host-ops.ts keeps the in-memory one for other steps). */
export function persistedDelta(ctx: RunContext, args: Args): number | undefined {
  if (!ctx.store) return undefined;
  return writable(ctx, 'delta').delta(str(args, 0, 'delta key'), finite(args, 1, 'delta value'));
}

/** Host ops of `setPersistedItem`, `getPersistedItem`, `getTimestampManager()` and `queue()` (README.md). */
export const PERSIST_OPS: Record<string, Op> = {
  'persist.check': (ctx) => {
    storeOf(ctx, 'persistence');
    return null;
  },
  // In an authentication context (ADR 0130) a value written there is read first; ordinary values stay readable.
  'persist.get': (ctx, a) => {
    const store = storeOf(ctx, 'getPersistedItem');
    const key = str(a, 0, 'key');
    const sealed = ctx.isAuth ? (store.getAuthItem?.(key) ?? null) : null;
    if (sealed === null) return store.getItem(key);
    ctx.shared.secrets.add(sealed);
    return sealed;
  },
  // In an authentication context the value is stored sealed, apart, for authentication contexts only (ADR 0130).
  'persist.set': (ctx, a) => {
    const value = a[1] === null ? null : str(a, 1, 'value');
    const key = str(a, 0, 'key');
    if (!ctx.isAuth) {
      writable(ctx, 'setPersistedItem').setItem(key, value);
      return null;
    }
    const store = storeOf(ctx, 'setPersistedItem');
    if (!store.setAuthItem)
      throw new EngineError(
        'ENGINE_NOT_PERMITTED',
        'setPersistedItem is read-only in an authentication context',
      );
    if (value !== null) ctx.shared.secrets.add(value);
    store.setAuthItem(key, value);
    return null;
  },
  // The realm's buffered setPersistedItem calls, in call order (README "Persistence": write buffer).
  'persist.setMany': flushMany,
  // The write buffer's last batch as the run ends (posted by the worker, ADR 0066): stored, and the store starts
  // committing what it holds, while the rest of the step goes on.
  'persist.setLast': setLast,
  'ts.get': (ctx, a) => storeOf(ctx, 'getTimestampManager').getTimestamp(str(a, 0, 'key')),
  'ts.first': (ctx, a) => storeOf(ctx, 'getTimestampManager').firstTimestamp(str(a, 0, 'key')),
  'ts.set': (ctx, a) => {
    writable(ctx, 'getTimestampManager().set').setTimestamp(str(a, 0, 'key'), timestamp(a, 1));
    return null;
  },
  'ts.setIfLatest': (ctx, a) =>
    writable(ctx, 'getTimestampManager().setIfLastest').setTimestampIfLatest(
      str(a, 0, 'key'),
      timestamp(a, 1),
    ),
  // docs/interfaces.md §5.6: the step's timestampOverride is "now" when set, as for getTimestamp().
  'ts.minutesAgo': (ctx, a) => {
    storeOf(ctx, 'getTimestampManager');
    const now = ctx.step.timestampOverride ?? ctx.shared.host.now();
    return Math.round(now - finite(a, 0, 'minutesAgo n') * MINUTE_MS);
  },
  'queue.push': (ctx, a) => {
    writable(ctx, 'queue().push').push(str(a, 0, 'queue'), str(a, 1, 'item'));
    return null;
  },
  'queue.return': (ctx, a) => {
    writable(ctx, 'queue().returnItem').returnItem(str(a, 0, 'queue'), str(a, 1, 'item'));
    return null;
  },
  'queue.take': (ctx, a) => {
    const n = integerArg(a[1], 'queue().take: n', 0, MAX_TAKE_ITEMS);
    return writable(ctx, 'queue().take').take(str(a, 0, 'queue'), n);
  },
  'queue.size': (ctx, a) => storeOf(ctx, 'queue().size').queueSize(str(a, 0, 'queue')),
};

/**
 * `[maxKeyBytes, maxValueBytes]` when the run's `setPersistedItem` calls may be buffered in the sandbox (README
 * "Persistence": write buffer): the step has a store that states its item limits and the run may write it.
 */
export function writeBuffer(ctx: Pick<RunContext, 'store' | 'isAuth'>): [number, number] | null {
  const limits = ctx.isAuth ? undefined : ctx.store?.itemLimits;
  return limits ? [limits.maxKeyBytes, limits.maxValueBytes] : null;
}

/**
 * Opens the store of every step with persistence (README.md "Persistence"): at load, so a bad, foreign or
 * wrongly keyed file stops start-up rather than a later run. Opening an LMDB environment is synchronous (2–30 ms
 * each): the loop yields to the event loop before each one, so timers (a caller's `startupWaitTimeoutMs`) and other
 * deployments' requests are served while a workflow with many stores loads (issue 27).
 * @throws EngineError `ENGINE_PERSISTENCE_INVALID` (no provider), or what the provider throws.
 */
export async function openStores(
  models: Iterable<StepModel>,
  host: EngineHost,
): Promise<Map<string, PersistentStore>> {
  const stores = new Map<string, PersistentStore>();
  for (const m of models) {
    if (!m.persistence) continue;
    if (!host.persistence)
      throw new EngineError(
        'ENGINE_PERSISTENCE_INVALID',
        `step ${JSON.stringify(m.stepId.slice(0, 200))} has persistence but the host provides none`,
      );
    await yieldToEventLoop();
    stores.set(m.uid, await host.persistence.open(m.stepId, m.persistence));
  }
  return stores;
}

/** Resolves after the event loop has run its timers and I/O (a macrotask, not a microtask). */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

type Metric = Parameters<EngineHost['metric']>[0];

/** Metrics of a running step with persistence, held until its writes are durable (S127). */
const heldMetrics = new WeakMap<RunState, Metric[]>();

/**
 * Holds a metric of a step with persistence until {@link settleStep}, so a value reported by a metric is
 * never ahead of what the store gives back after a crash. False when the step has no persistence.
 */
export function deferMetric(ctx: RunContext, m: Metric): boolean {
  if (!ctx.shared.stores.has(ctx.step.uid)) return false;
  const held = heldMetrics.get(ctx.state);
  if (held) held.push(m);
  else heldMetrics.set(ctx.state, [m]);
  return true;
}

/** A step run's store: its own view when the store has one (ADR 0126), else the store and its write mark. */
export interface StepStore {
  store: PersistentStore;
  mark: number | undefined;
}

/** Begins a run of `step` on its store (for {@link settleStep}); undefined on a step without persistence. */
export function beginStep(shared: EngineShared, step: StepModel): StepStore | undefined {
  const store = shared.stores.get(step.uid);
  if (!store) return undefined;
  if (store.begin) return { store: store.begin(), mark: undefined };
  return { store, mark: store.writeMark };
}

/**
 * Commits the step run's writes and waits until they are durable (flushed, or committed with
 * `persistenceFileFlush: false`), then emits its held metrics; runs before the result is returned (S127). A failed
 * write errors the run.
 */
export async function settleStep(
  shared: EngineShared,
  step: StepModel,
  state: RunState,
  run: StepStore | undefined,
): Promise<void> {
  if (!run || !step.persistence) return;
  try {
    await run.store.settle(step.persistence.flush, run.mark);
  } catch {
    state.errors.push("ENGINE_PERSISTENCE_FAILED: the step's writes could not be stored");
  }
  const held = heldMetrics.get(state) ?? [];
  heldMetrics.delete(state);
  for (const m of held) shared.host.metric(m);
}
