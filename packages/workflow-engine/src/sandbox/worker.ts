/**
 * The sandbox worker thread (ADR 0040), built to `dist/sandbox/worker.js` and started by `sandbox.ts` with
 * `new Worker(new URL(…))` (ADR 0050).
 *
 * The worker keeps one sandbox per engine that ran here (ADR 0042): a wasm instance of QuickJS (sync variant),
 * a runtime with a memory limit, a stack limit and an interrupt deadline, and one hardened realm, created with
 * exactly one host function (`__host`) and the prelude (`realm/prelude.ts`), which builds a fresh `context`,
 * `console` and `doc` for every run; the worker evaluates the processor script in it, posts the final run state
 * back and audits the realm before reusing it. `__host` is a synchronous call to the main thread: the request
 * goes out on a dedicated port and the worker blocks on `Atomics.wait` until the reply is there
 * (`receiveMessageOnPort`). Time spent blocked in a host call does not count against the script's deadline.
 */
import { MessageChannel, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import * as variantModule from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
} from 'quickjs-emscripten-core';
import type {
  ErrorFields,
  HostCallMessage,
  HostReply,
  SandboxJob,
  SandboxWorkerData,
  WorkerResult,
} from './protocol.js';
import { LOCAL_OPS, runLocalOp } from './local-ops.js';
import { newArrayBufferChecked, newArrayBufferOfParts } from './heap.js';

const { rpcPort, signal, wasmModule, prelude, utilSource, spareMemoryBytes } =
  workerData as SandboxWorkerData;
const parent = parentPort!;
// The variant's types describe its CommonJS build; imported as ESM, its default export is the variant.
const variant = variantModule.default;
const flag = new Int32Array(signal);
let hostWaitMs = 0;

/** `WebAssembly` is a global in Node, but this package's `lib` only declares its types. */
const wasmApi = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => object };
  }
).WebAssembly;

// Only calls that wait on something outside the sandbox stop the script's clock; cheap ones (log, metric,
// counters) count as script time, so a loop of them still ends at the deadline.
const WAITING_OPS = new Set([
  'sendToStep',
  'sendToDeployment',
  'authCall',
  'restrictedData',
  'sleep',
  'stream.read',
  'stream.available',
]);

// The buffer of the last stream read, already copied into the sandbox: handed back with the next call for reuse.
let spare: ArrayBuffer | undefined;

// A port whose other end is closed: a buffer transferred to it is detached and freed at once. The chunks of a
// stream read end there once copied into the sandbox; left to this thread's garbage collector, which rarely
// runs (its heap barely grows), they would pile up until a full collection: tens of MiB during an upload.
const sink = new MessageChannel();
sink.port2.close();
function release(parts: readonly Uint8Array[]): void {
  const buffers = new Set<ArrayBuffer>();
  for (const p of parts)
    if (p.buffer instanceof ArrayBuffer && p.buffer.byteLength > 0) buffers.add(p.buffer);
  try {
    sink.port1.postMessage(undefined, [...buffers]);
  } catch {
    /* left to the garbage collector */
  }
}

function hostCall(op: string, args: HostCallMessage['args']): HostReply {
  const started = Date.now();
  Atomics.store(flag, 0, 0);
  if (spare) {
    rpcPort.postMessage({ op, args, spare } satisfies HostCallMessage, [spare]);
    spare = undefined;
  } else rpcPort.postMessage({ op, args } satisfies HostCallMessage);
  for (;;) {
    Atomics.wait(flag, 0, 0, 1000);
    const got = receiveMessageOnPort(rpcPort);
    if (got) {
      if (WAITING_OPS.has(op) || op.startsWith('files.')) hostWaitMs += Date.now() - started;
      return got.message as HostReply;
    }
  }
}

// Bytes the worker owns outright (a transferred or freshly cloned buffer) go into the sandbox without another copy.
function ownBuffer(u8: Uint8Array): ArrayBuffer {
  return u8.byteOffset === 0 && u8.byteLength === u8.buffer.byteLength
    ? (u8.buffer as ArrayBuffer)
    : u8.slice().buffer;
}

function toHandle(ctx: QuickJSContext, value: unknown): QuickJSHandle {
  if (value instanceof Uint8Array) return newArrayBufferChecked(ctx, ownBuffer(value));
  if (value === undefined) return ctx.undefined;
  return ctx.newString(JSON.stringify(value));
}

/** The parts of quickjs-emscripten 0.32's context that `getString` uses (not public API; checked before use). */
interface ContextInternals {
  ffi?: {
    QTS_GetString?(ctx: number, value: number): number;
    QTS_FreeCString?(ctx: number, ptr: number): void;
  };
  module?: { HEAPU8?: Uint8Array };
  ctx?: { value?: number };
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * `getString` for a string of `length` UTF-16 code units, without emscripten's scan for the NUL in JavaScript
 * (ADR 0066): the C string's UTF-8 is at least `length` bytes, so its end is the first NUL from there, found by
 * `indexOf` (native); the bytes are decoded as they are. A NUL or lone surrogate in the text gives a result of
 * another length or with U+FFFD, which {@link exactString} reads again as JSON. Falls back to `getString` when the
 * library's internals are not as expected.
 */
function readText(ctx: QuickJSContext, h: QuickJSHandle, length: number): string {
  const x = ctx as unknown as ContextInternals;
  const ffi = x.ffi,
    heap = x.module?.HEAPU8,
    c = x.ctx?.value,
    value = (h as unknown as { value?: unknown }).value;
  if (
    !ffi?.QTS_GetString ||
    !ffi.QTS_FreeCString ||
    !(heap instanceof Uint8Array) ||
    typeof c !== 'number' ||
    typeof value !== 'number' ||
    length < 0
  )
    return ctx.getString(h);
  const ptr = ffi.QTS_GetString(c, value);
  try {
    const mem = x.module!.HEAPU8!; // after the call: the heap may have grown
    const end = mem.indexOf(0, ptr + length);
    return utf8.decode(mem.subarray(ptr, end < 0 ? ptr : end));
  } finally {
    ffi.QTS_FreeCString(c, ptr);
  }
}

/**
 * Reads a sandbox string exactly. A C string stops at a NUL, and a lone surrogate comes out as U+FFFD. When the
 * text read is shorter or longer than the string, or holds a U+FFFD, the string is read again as JSON (the realm's
 * own `JSON.stringify`, taken before any script ran), which escapes both. Used for the write buffer's text
 * (ADR 0066): it is joined, not escaped, in the sandbox.
 */
function exactString(ctx: QuickJSContext, h: QuickJSHandle, stringify: QuickJSHandle): string {
  const lengthH = ctx.getProp(h, 'length');
  const length = ctx.typeof(lengthH) === 'number' ? ctx.getNumber(lengthH) : -1;
  lengthH.dispose();
  const s = readText(ctx, h, length);
  if (s.length === length && !s.includes('\uFFFD')) return s;
  const r = ctx.callFunction(stringify, ctx.undefined, h);
  if (r.error) {
    r.error.dispose();
    throw new Error('the sandbox text could not be read');
  }
  const json = ctx.typeof(r.value) === 'string' ? ctx.getString(r.value) : '';
  r.value.dispose();
  const exact: unknown = JSON.parse(json);
  if (typeof exact !== 'string') throw new Error('the sandbox text could not be read');
  return exact;
}

/** The realm's `JSON.stringify`, taken when the sandbox is made (before the prelude and any script run). */
function stringifyOf(ctx: QuickJSContext): QuickJSHandle {
  const json = ctx.getProp(ctx.global, 'JSON');
  const fn = ctx.getProp(json, 'stringify');
  json.dispose();
  return fn;
}

// `memoryBytes`: the sandbox's memory limit, the most a local op (gunzip, unzip) may output.
function installHost(ctx: QuickJSContext, stringify: QuickJSHandle, memoryBytes: number): void {
  const fn = ctx.newFunction(
    '__host',
    (opH: QuickJSHandle, argsH?: QuickJSHandle, bytesH?: QuickJSHandle, textH?: QuickJSHandle) => {
      const op = ctx.getString(opH);
      const args = argsH && ctx.typeof(argsH) === 'string' ? ctx.getString(argsH) : '[]';
      if (LOCAL_OPS.has(op)) return runLocalOp(ctx, op, args, bytesH, memoryBytes); // ADR 0075
      const text = textH && ctx.typeof(textH) === 'string' ? exactString(ctx, textH, stringify) : undefined;
      // The copies of sandbox ArrayBuffers are made in place, here and in finishRun, not in a shared helper: with one
      // (44cfd6f), each sandbox worker promoted about 8 MB of garbage to its old space per 30 s of echo load (old
      // space 5.5 → 10–12.5 MB, mark-compacts back to 4.5 MB live: nothing more was kept), with the copies in place
      // none (agent bench item 5, --trace-gc). Why V8 promotes more with the helper was not found.
      let bytes: Uint8Array | undefined;
      if (bytesH && ctx.typeof(bytesH) === 'object') {
        const life = ctx.getArrayBuffer(bytesH);
        bytes = life.value.slice();
        life.dispose();
      }
      const reply = hostCall(op, { json: args, bytes, text });
      if (reply.error) return { error: ctx.newError({ name: 'Error', message: reply.error }) };
      let handle: QuickJSHandle;
      if (reply.parts) {
        try {
          handle = newArrayBufferOfParts(ctx, reply.parts);
        } finally {
          release(reply.parts);
        }
      } else handle = toHandle(ctx, reply.value);
      if (
        reply.stream &&
        reply.value instanceof Uint8Array &&
        reply.value.byteLength === reply.value.buffer.byteLength
      )
        spare = reply.value.buffer as ArrayBuffer;
      return handle;
    },
  );
  ctx.setProp(ctx.global, '__host', fn);
  fn.dispose();
}

/** A thrown value as read here; `thrownNothing` when it was `undefined` or `null`. */
interface ThrownError extends ErrorFields {
  thrownNothing?: boolean;
}

// What a thrown value says, read property by property: never ctx.dump, which disposes some handles itself
// (a thrown promise) and converts whole objects. A getter that throws gives an empty field.
function describeError(ctx: QuickJSContext, handle: QuickJSHandle): ThrownError {
  const kind = ctx.typeof(handle);
  if (kind === 'undefined' || ctx.sameValue(handle, ctx.null)) {
    return { name: 'Error', message: String(kind === 'undefined' ? undefined : null), thrownNothing: true };
  }
  if (kind !== 'object' && kind !== 'function') {
    let text = '';
    try {
      text = String(ctx.dump(handle));
    } catch {
      /* leave it empty */
    }
    return { name: 'Error', message: text };
  }
  const field = (key: string): string => {
    try {
      const v = ctx.getProp(handle, key);
      const text = ctx.typeof(v) === 'string' ? ctx.getString(v) : '';
      v.dispose();
      return text;
    } catch {
      return '';
    }
  };
  return { name: field('name') || 'Error', message: field('message') };
}

// Promise reactions (then/await) queued by the script run before the state is read.
function drainJobs(rt: QuickJSRuntime): ThrownError | undefined {
  for (let i = 0; i < 10000; i++) {
    const r = rt.executePendingJobs(1000);
    if (r.error) {
      const e = describeError(r.error.context, r.error);
      if (r.error.alive) r.error.dispose();
      return e;
    }
    if (r.value === 0) return undefined;
  }
  return { name: 'InternalError', message: 'too many pending jobs' };
}

function finishRun(
  ctx: QuickJSContext,
  run: QuickJSHandle,
  finish: QuickJSHandle,
  flush: boolean,
  stringify: QuickJSHandle,
):
  | { error: ThrownError }
  | {
      error?: undefined;
      output: string | undefined;
      bytes: Uint8Array | undefined;
      writes: HostCallMessage['args'] | undefined;
    } {
  const r = ctx.callFunction(finish, run, flush ? ctx.true : ctx.false);
  if (r.error) {
    const error = describeError(ctx, r.error);
    r.error.dispose();
    return { error };
  }
  try {
    const json = ctx.getProp(r.value, 0),
      buf = ctx.getProp(r.value, 1),
      writesLengths = ctx.getProp(r.value, 2),
      writesText = ctx.getProp(r.value, 3);
    const output = ctx.typeof(json) === 'string' ? ctx.getString(json) : undefined;
    let writes: HostCallMessage['args'] | undefined;
    if (ctx.typeof(writesLengths) === 'object') {
      const life = ctx.getArrayBuffer(writesLengths);
      const lengths = life.value.slice();
      life.dispose();
      writes = {
        json: '[]',
        bytes: lengths,
        text: ctx.typeof(writesText) === 'string' ? exactString(ctx, writesText, stringify) : undefined,
      };
    }
    writesLengths.dispose();
    writesText.dispose();
    let bytes: Uint8Array | undefined;
    if (ctx.typeof(buf) === 'object') {
      const life = ctx.getArrayBuffer(buf);
      bytes = life.value.slice();
      life.dispose();
    }
    json.dispose();
    buf.dispose();
    return { output, bytes, writes };
  } finally {
    r.value.dispose();
  }
}

/** One engine's sandbox in this worker: wasm instance, runtime, hardened realm and the prelude's two functions. */
interface Sandbox {
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  /** The realm's `JSON.stringify` ({@link exactString}). */
  stringify: QuickJSHandle;
  begin: QuickJSHandle;
  audit: QuickJSHandle;
  memoryBytes: number;
  baseline: number;
  runs: number;
  /** When a run last took this sandbox ({@link useClock}): the least recent goes first. */
  lastUsed: number;
}

// One sandbox per engine that ran here (ADR 0042): its own wasm instance (its own heap: nothing of one engine's
// runs is in memory another engine's script could ever reach), runtime and hardened realm. A sandbox is reused
// only by runs of its engine, and only while each run ends cleanly. Past MAX_SANDBOXES the least recently used
// goes. Recency is a counter on the sandbox, not the map's order: moving an entry to the end (delete, then set)
// on every run makes V8 rebuild the map's table each time, and a long-lived map's new table is allocated in the
// old generation: ≈ 50 bytes of old-space garbage per run, several MB between two full collections under load.
const sandboxes = new Map<string, Sandbox>();
const MAX_SANDBOXES = 4;
let useClock = 0;

function leastRecentlyUsed(): string {
  let key = '',
    min = Infinity;
  for (const [k, sb] of sandboxes) {
    if (sb.lastUsed < min) {
      min = sb.lastUsed;
      key = k;
    }
  }
  return key;
}

// Objects of a past run can outlive it where the audit cannot see them (private fields stamped on frozen
// built-ins), holding memory later runs of the engine then lack. Every 16th run of a sandbox its memory in use
// is compared with what it was right after set-up; more than 1 MiB above, and the sandbox is replaced.
// (Measuring costs ≈ 0.3–0.5 ms, too much for every run.)
const MEMORY_CHECK_EVERY = 16,
  MEMORY_ALLOWANCE = 1024 * 1024;

// QuickJS's estimate of its heap, plus array buffer contents, which that estimate leaves out.
function memoryInUse(sb: Sandbox): number {
  const usage = sb.rt.computeMemoryUsage();
  let n = 0;
  for (const field of ['memory_used_size', 'binary_object_size']) {
    const v = sb.ctx.getProp(usage, field);
    n += sb.ctx.typeof(v) === 'number' ? sb.ctx.getNumber(v) : 0;
    v.dispose();
  }
  usage.dispose();
  return n;
}

function isOutOfMemory(e: ErrorFields | undefined): boolean {
  return !!e && /out of memory/i.test(e.message);
}

function disposeSandbox(key: string): void {
  const sb = sandboxes.get(key);
  if (!sb) return;
  sandboxes.delete(key);
  freeSandbox(sb);
}

function freeSandbox(sb: Sandbox): void {
  // A runtime that hit its limits may not free cleanly; its wasm instance goes with it either way.
  try {
    sb.begin.dispose();
    sb.audit.dispose();
    sb.stringify.dispose();
    sb.ctx.dispose();
    sb.rt.dispose();
  } catch {
    /* see above */
  }
}

// setMemoryLimit alone does not bound the total of large strings and typed arrays (quickjs-emscripten
// issue 271), so each instance gets its own fixed-size linear memory: 16 MiB base + the run's memory limit.
const PAGE = 65536,
  BASE_PAGES = 256;

async function sandboxFor(job: SandboxJob): Promise<Sandbox> {
  const found = sandboxes.get(job.realm);
  if (found && found.memoryBytes === job.memoryBytes) {
    found.lastUsed = ++useClock;
    return found;
  }
  disposeSandbox(job.realm);
  const sb = (await takeSpare(job.memoryBytes)) ?? (await newSandbox(job.memoryBytes));
  sb.lastUsed = ++useClock;
  sandboxes.set(job.realm, sb);
  while (sandboxes.size > MAX_SANDBOXES) disposeSandbox(leastRecentlyUsed());
  return sb;
}

/**
 * A sandbox set up as this worker started, before any engine asked (a worker started by `prewarmSandbox`,
 * ADR 0149), for runs with the memory limit `spareMemoryBytes`. No run has touched it, so it is what
 * {@link newSandbox} would set up for the first engine that asks with that limit, which takes it; a first engine
 * with another limit drops it.
 */
let spareSandbox: Promise<Sandbox | undefined> | undefined =
  spareMemoryBytes === undefined ? undefined : newSandbox(spareMemoryBytes).catch(() => undefined);

async function takeSpare(memoryBytes: number): Promise<Sandbox | undefined> {
  const pending = spareSandbox;
  if (!pending) return undefined;
  spareSandbox = undefined;
  const sb = await pending;
  if (sb && sb.memoryBytes === memoryBytes) return sb;
  if (sb) freeSandbox(sb);
  return undefined;
}

/** A new sandbox: wasm instance, runtime, realm with `__host` and the prelude evaluated; baseline measured. */
async function newSandbox(memoryBytes: number): Promise<Sandbox> {
  const maximum = BASE_PAGES + Math.ceil(memoryBytes / PAGE);
  const wasmMemory = new wasmApi.Memory({ initial: BASE_PAGES, maximum });
  const qjs = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule, wasmMemory }));
  const rt = qjs.newRuntime();
  const ctx = rt.newContext();
  const stringify = stringifyOf(ctx);
  let setup;
  try {
    installHost(ctx, stringify, memoryBytes);
    const util = ctx.newString(utilSource);
    ctx.setProp(ctx.global, '__utilSource', util);
    util.dispose();
    setup = ctx.evalCode(prelude, 'prelude.js');
    if (setup.error) {
      const e = describeError(ctx, setup.error);
      setup.error.dispose();
      throw new Error(e.name + ': ' + e.message);
    }
  } catch (e) {
    try {
      stringify.dispose();
      ctx.dispose();
      rt.dispose();
    } catch {
      /* the instance is dropped anyway */
    }
    throw e;
  }
  const sb: Sandbox = {
    rt,
    ctx,
    stringify,
    begin: ctx.getProp(setup.value, 0),
    audit: ctx.getProp(setup.value, 1),
    memoryBytes,
    baseline: 0,
    runs: 0,
    lastUsed: 0,
  };
  setup.value.dispose();
  memoryInUse(sb); // the first measurement may set up the runtime's own helper context
  sb.baseline = memoryInUse(sb);
  return sb;
}

/** The script's clock: `start` of its time, and whether the interrupt handler stopped it. */
interface Clock {
  start: number;
  interrupted: boolean;
}

function limit(sb: Sandbox, job: SandboxJob, clock: Clock): void {
  sb.rt.setMemoryLimit(job.memoryBytes);
  sb.rt.setMaxStackSize(job.maxStackBytes);
  sb.rt.setInterruptHandler(() => {
    if (Date.now() - clock.start - hostWaitMs > job.timeMs) clock.interrupted = true;
    return clock.interrupted;
  });
}

/** The outcome of a job as the worker sees it; `clean` when the audit passed (the realm may be reused). */
interface RunResult extends WorkerResult {
  kind: 'done' | 'fail';
  scriptError?: ThrownError | undefined;
  clean?: boolean;
}

function runInRealm(sb: Sandbox, job: SandboxJob, clock: Clock): RunResult {
  const { ctx } = sb;
  const inputH = ctx.newString(job.input);
  const bytesH = job.inBytes ? ctx.newArrayBuffer(ownBuffer(job.inBytes)) : ctx.undefined;
  const started = ctx.callFunction(sb.begin, ctx.undefined, inputH, bytesH);
  inputH.dispose();
  if (job.inBytes) bytesH.dispose();
  if (started.error) {
    const error = describeError(ctx, started.error);
    started.error.dispose();
    return { kind: 'fail', error, interrupted: clock.interrupted };
  }
  const run = started.value;
  const exec = ctx.getProp(run, 'exec'),
    finish = ctx.getProp(run, 'finish');
  try {
    const source = ctx.newString(job.script);
    const r = ctx.callFunction(exec, run, source);
    source.dispose();
    let scriptError: ThrownError | undefined;
    if (r.error) {
      scriptError = describeError(ctx, r.error);
      r.error.dispose();
    } else r.value.dispose();
    scriptError = scriptError || drainJobs(sb.rt);
    // After a timeout the realm's write buffer is dropped (README "Persistence"): no script-side code runs past it.
    const out = finishRun(ctx, run, finish, !clock.interrupted, sb.stringify);
    if (out.error) return { kind: 'fail', error: out.error, interrupted: clock.interrupted };
    // The write buffer's last batch goes at once, not with the result: the main thread starts storing it while
    // this thread audits the realm (ADR 0066). It handles the call before the result (sandbox-worker.ts).
    if (out.writes)
      rpcPort.postMessage({
        op: 'persist.setLast',
        args: out.writes,
        oneWay: true,
      } satisfies HostCallMessage);
    const audited = ctx.callFunction(sb.audit, ctx.undefined);
    let clean = false;
    if (audited.error) audited.error.dispose();
    else {
      clean = ctx.typeof(audited.value) === 'boolean' && ctx.dump(audited.value) === true;
      audited.value.dispose();
    }
    return {
      kind: 'done',
      output: out.output,
      outBytes: out.bytes,
      scriptError,
      interrupted: clock.interrupted,
      clean,
    };
  } finally {
    exec.dispose();
    finish.dispose();
    run.dispose();
  }
}

function messageOf(e: unknown): string {
  return String(e && (e as { message?: unknown }).message);
}

async function runJob(job: SandboxJob): Promise<RunResult> {
  hostWaitMs = 0;
  const clock: Clock = { start: Date.now(), interrupted: false };
  let result: RunResult;
  let sb: Sandbox | undefined;
  try {
    sb = await sandboxFor(job);
    limit(sb, job, clock);
    clock.start = Date.now(); // setting up a sandbox is not the script's time
    result = runInRealm(sb, job, clock);
  } catch (e) {
    result = {
      kind: 'fail',
      error: { name: 'InternalError', message: messageOf(e) },
      interrupted: clock.interrupted,
    };
  }
  // An interrupt, an out-of-memory (QuickJS may throw it as a bare null), a failure outside the script, or promise
  // jobs left behind (they would run in the next run's drain) may leave the sandbox in any state: replace it.
  // A script that merely threw leaves it like any other run: audited, reused when clean.
  const suspect =
    result.kind !== 'done' ||
    result.interrupted ||
    isOutOfMemory(result.scriptError) ||
    (result.scriptError && result.scriptError.thrownNothing) ||
    !sb ||
    sb.rt.hasPendingJob() ||
    !result.clean;
  if (suspect) disposeSandbox(job.realm);
  else if (++sb!.runs % MEMORY_CHECK_EVERY === 0 && memoryInUse(sb!) > sb!.baseline + MEMORY_ALLOWANCE)
    disposeSandbox(job.realm);
  return result;
}

parent.on('message', (job: SandboxJob) => {
  void (async () => {
    let result: WorkerResult;
    try {
      result = await runJob(job);
    } catch (e) {
      result = { kind: 'fail', error: { name: 'InternalError', message: messageOf(e) } };
    }
    parent.postMessage(result);
  })();
});
parent.postMessage({ kind: 'ready' } satisfies WorkerResult);
