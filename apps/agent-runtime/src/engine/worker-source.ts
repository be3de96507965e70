/**
 * Source of the sandbox worker thread (ADR 0040). It runs as an `eval` worker so that the engine works the
 * same from `src/` (vitest) and from a bundled `dist/` without a separate entry file.
 *
 * The worker keeps one QuickJS runtime (sync wasm variant, loaded once per worker) with a memory limit, a stack
 * limit and an interrupt deadline, and in it one hardened realm per engine that ran here (ADR 0042). A realm is
 * created with exactly one host function (`__host`) and the prelude, which builds a fresh `context`, `console`
 * and `doc` for every run; the worker evaluates the processor script in it, posts the final run state back and
 * audits the realm before reusing it. `__host` is a synchronous call to the main thread: the request goes out on
 * a dedicated port and the worker blocks on `Atomics.wait` until the reply is there (`receiveMessageOnPort`). Time
 * spent blocked in a host call does not count against the script's deadline.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const { corePath, variantPath, rpcPort, signal, wasmModule, prelude, utilSource } = workerData;
const flag = new Int32Array(signal);
let qjs;
let hostWaitMs = 0;

// Only calls that wait on something outside the sandbox stop the script's clock; cheap ones (log, metric,
// counters) count as script time, so a loop of them still ends at the deadline.
const WAITING_OPS = new Set(['sendToStep', 'authCall', 'restrictedData', 'sleep', 'stream.read', 'stream.available']);

// The buffer of the last stream read, already copied into the sandbox: handed back with the next call for reuse.
let spare;

function hostCall(op, args) {
  const started = Date.now();
  Atomics.store(flag, 0, 0);
  if (spare) { rpcPort.postMessage({ op, args, spare }, [spare]); spare = undefined; }
  else rpcPort.postMessage({ op, args });
  for (;;) {
    Atomics.wait(flag, 0, 0, 1000);
    const got = receiveMessageOnPort(rpcPort);
    if (got) { if (WAITING_OPS.has(op)) hostWaitMs += Date.now() - started; return got.message; }
  }
}

// Bytes the worker owns outright (a transferred or freshly cloned buffer) go into the sandbox without another copy.
function ownBuffer(u8) {
  return u8.byteOffset === 0 && u8.byteLength === u8.buffer.byteLength ? u8.buffer : u8.slice().buffer;
}

function toHandle(ctx, value) {
  if (value instanceof Uint8Array) return ctx.newArrayBuffer(ownBuffer(value));
  if (value === undefined) return ctx.undefined;
  return ctx.newString(JSON.stringify(value));
}

function installHost(ctx) {
  const fn = ctx.newFunction('__host', (opH, argsH, bytesH) => {
    const op = ctx.getString(opH);
    const args = argsH && ctx.typeof(argsH) === 'string' ? ctx.getString(argsH) : '[]';
    let bytes;
    if (bytesH && ctx.typeof(bytesH) === 'object') {
      const life = ctx.getArrayBuffer(bytesH);
      bytes = life.value.slice();
      life.dispose();
    }
    const reply = hostCall(op, { json: args, bytes });
    if (reply.error) return { error: ctx.newError({ name: 'Error', message: reply.error }) };
    const handle = toHandle(ctx, reply.value);
    if (reply.stream && reply.value instanceof Uint8Array && reply.value.byteLength === reply.value.buffer.byteLength) spare = reply.value.buffer;
    return handle;
  });
  ctx.setProp(ctx.global, '__host', fn);
  fn.dispose();
}

function describeError(ctx, handle) {
  const dumped = ctx.dump(handle);
  if (dumped && typeof dumped === 'object') {
    return { name: String(dumped.name || 'Error'), message: String(dumped.message || '') };
  }
  return { name: 'Error', message: String(dumped) };
}

// Promise reactions (then/await) queued by the script run before the state is read.
function drainJobs(rt) {
  for (let i = 0; i < 10000; i++) {
    const r = rt.executePendingJobs(1000);
    if (r.error) { const e = describeError(r.error.context, r.error); r.error.dispose(); return e; }
    if (r.value === 0) return undefined;
  }
  return { name: 'InternalError', message: 'too many pending jobs' };
}

function finishRun(ctx, run, finish) {
  const r = ctx.callFunction(finish, run);
  if (r.error) { const error = describeError(ctx, r.error); r.error.dispose(); return { error }; }
  try {
    const json = ctx.getProp(r.value, 0), buf = ctx.getProp(r.value, 1);
    const output = ctx.typeof(json) === 'string' ? ctx.getString(json) : undefined;
    let bytes;
    if (ctx.typeof(buf) === 'object') { const life = ctx.getArrayBuffer(buf); bytes = life.value.slice(); life.dispose(); }
    json.dispose(); buf.dispose();
    return { output, bytes };
  } finally {
    r.value.dispose();
  }
}

// One runtime per wasm instance is reused; after an interrupt, an out-of-memory or a failure it is thrown away
// with every realm in it, and the next run gets a new one.
let cachedRt;
// Hardened realms (ADR 0042), one per engine that ran here, least recently used first. A realm is reused only
// by runs of the engine that created it, and only while its audit after each run passes.
const realms = new Map();
const MAX_REALMS = 4;

// Objects of a past run can outlive it where the audit cannot see them (private fields stamped on frozen
// built-ins), holding memory that the other realms in this runtime then lack. Every 16th run the runtime's
// memory in use is compared with what it was after its realms were set up; more than 1 MiB above, and the
// runtime is replaced. (Measuring costs ≈ 0.3–0.5 ms, too much for every run.)
const MEMORY_CHECK_EVERY = 16, MEMORY_ALLOWANCE = 1024 * 1024;
let memoryBaseline = 0, runsSinceMemoryCheck = 0;

// QuickJS's estimate of its heap, plus array buffer contents, which that estimate leaves out.
function memoryInUse(ctx) {
  const usage = cachedRt.computeMemoryUsage();
  let n = 0;
  for (const field of ['memory_used_size', 'binary_object_size']) {
    const v = ctx.getProp(usage, field);
    n += ctx.typeof(v) === 'number' ? ctx.getNumber(v) : 0;
    v.dispose();
  }
  usage.dispose();
  return n;
}

function rebaseline(ctx) {
  memoryInUse(ctx); // the first measurement may set up the runtime's own helper context
  memoryBaseline = memoryInUse(ctx);
  runsSinceMemoryCheck = 0;
}

function isOutOfMemory(e) {
  return !!e && /out of memory/i.test(e.message);
}

function runtimeFor(job, clock) {
  if (!cachedRt) cachedRt = qjs.newRuntime();
  cachedRt.setMemoryLimit(job.memoryBytes);
  cachedRt.setMaxStackSize(job.maxStackBytes);
  cachedRt.setInterruptHandler(() => {
    if (Date.now() - clock.start - hostWaitMs > job.timeMs) clock.interrupted = true;
    return clock.interrupted;
  });
  return cachedRt;
}

function disposeRealm(key) {
  const r = realms.get(key);
  if (!r) return;
  realms.delete(key);
  try { r.begin.dispose(); r.audit.dispose(); r.ctx.dispose(); } catch (e) { /* a context that hit its limits may not free cleanly */ }
}

function dropRuntime() {
  for (const key of [...realms.keys()]) disposeRealm(key);
  const rt = cachedRt;
  cachedRt = undefined;
  try { if (rt) rt.dispose(); } catch (e) { /* a runtime that hit its limits may not free cleanly */ }
}

function realmFor(rt, key) {
  const found = realms.get(key);
  if (found) { realms.delete(key); realms.set(key, found); return found; }
  const ctx = rt.newContext();
  let setup;
  try {
    installHost(ctx);
    const util = ctx.newString(utilSource);
    ctx.setProp(ctx.global, '__utilSource', util);
    util.dispose();
    setup = ctx.evalCode(prelude, 'prelude.js');
    if (setup.error) { const e = describeError(ctx, setup.error); setup.error.dispose(); throw new Error(e.name + ': ' + e.message); }
  } catch (e) {
    ctx.dispose();
    throw e;
  }
  const realm = { ctx, begin: ctx.getProp(setup.value, 0), audit: ctx.getProp(setup.value, 1) };
  setup.value.dispose();
  realms.set(key, realm);
  while (realms.size > MAX_REALMS) disposeRealm(realms.keys().next().value);
  rebaseline(ctx);
  return realm;
}

function runInRealm(realm, rt, job, clock) {
  const { ctx } = realm;
  const inputH = ctx.newString(job.input);
  const bytesH = job.inBytes ? ctx.newArrayBuffer(ownBuffer(job.inBytes)) : ctx.undefined;
  const started = ctx.callFunction(realm.begin, ctx.undefined, inputH, bytesH);
  inputH.dispose();
  if (job.inBytes) bytesH.dispose();
  if (started.error) {
    const error = describeError(ctx, started.error);
    started.error.dispose();
    return { kind: 'fail', error, interrupted: clock.interrupted };
  }
  const run = started.value;
  const exec = ctx.getProp(run, 'exec'), finish = ctx.getProp(run, 'finish');
  try {
    const source = ctx.newString(job.script);
    const r = ctx.callFunction(exec, run, source);
    source.dispose();
    let scriptError;
    if (r.error) { scriptError = describeError(ctx, r.error); r.error.dispose(); } else r.value.dispose();
    scriptError = scriptError || drainJobs(rt);
    const out = finishRun(ctx, run, finish);
    if (out.error) return { kind: 'fail', error: out.error, interrupted: clock.interrupted };
    const audited = ctx.callFunction(realm.audit, ctx.undefined);
    let clean = false;
    if (audited.error) audited.error.dispose();
    else { clean = ctx.dump(audited.value) === true; audited.value.dispose(); }
    return { kind: 'done', output: out.output, outBytes: out.bytes, scriptError, interrupted: clock.interrupted, clean };
  } finally {
    exec.dispose(); finish.dispose(); run.dispose();
  }
}

function runJob(job) {
  hostWaitMs = 0;
  const clock = { start: Date.now(), interrupted: false };
  let result;
  try {
    const rt = runtimeFor(job, clock);
    const realm = realmFor(rt, job.realm);
    clock.start = Date.now(); // setting up a realm is not the script's time
    result = runInRealm(realm, rt, job, clock);
  } catch (e) {
    result = { kind: 'fail', error: { name: 'InternalError', message: String(e && e.message) }, interrupted: clock.interrupted };
  }
  // An interrupt, an out-of-memory or a failure outside the script may leave the runtime in any state: replace
  // it, with every realm in it. So must a run that left promise jobs behind, since they would run in the next
  // run's drain. A script that merely threw leaves a realm like any other run: audited, reused when clean.
  if (result.kind !== 'done' || result.interrupted || isOutOfMemory(result.scriptError) || (cachedRt && cachedRt.hasPendingJob())) dropRuntime();
  else if (!result.clean) {
    disposeRealm(job.realm);
    const other = realms.values().next().value;
    if (other) rebaseline(other.ctx);
  } else if (++runsSinceMemoryCheck >= MEMORY_CHECK_EVERY) {
    runsSinceMemoryCheck = 0;
    const realm = realms.get(job.realm);
    if (realm && memoryInUse(realm.ctx) > memoryBaseline + MEMORY_ALLOWANCE) dropRuntime();
  }
  return result;
}

// setMemoryLimit alone does not bound the total of large strings and typed arrays (quickjs-emscripten
// issue 271), so each instance gets its own fixed-size linear memory: 16 MiB base + the run's memory limit.
const PAGE = 65536, BASE_PAGES = 256;
let core, variant, qjsLimit = -1;
async function instanceFor(memoryBytes) {
  if (qjs && qjsLimit === memoryBytes) return;
  dropRuntime();
  qjs = undefined;
  const maximum = BASE_PAGES + Math.ceil(memoryBytes / PAGE);
  const wasmMemory = new WebAssembly.Memory({ initial: BASE_PAGES, maximum });
  qjs = await core.newQuickJSWASMModuleFromVariant(core.newVariant(variant, { wasmModule, wasmMemory }));
  qjsLimit = memoryBytes;
}

(async () => {
  core = require(corePath);
  const v = require(variantPath);
  variant = v.default || v;
  await instanceFor(32 * 1024 * 1024);
  parentPort.on('message', async (job) => {
    let result;
    try { await instanceFor(job.memoryBytes); result = runJob(job); }
    catch (e) { result = { kind: 'fail', error: { name: 'InternalError', message: String(e && e.message) } }; }
    // A run that failed outside the script may have left the instance in a bad state: start a new one.
    if (result.kind === 'fail') qjsLimit = -1;
    parentPort.postMessage(result);
  });
  parentPort.postMessage({ kind: 'ready' });
})().catch((e) => { parentPort.postMessage({ kind: 'boot-failed', message: String(e && e.message) }); });
`;
