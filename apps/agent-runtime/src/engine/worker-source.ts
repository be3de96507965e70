/**
 * Source of the sandbox worker thread (ADR 0040). It runs as an `eval` worker so that the engine works the
 * same from `src/` (vitest) and from a bundled `dist/` without a separate entry file.
 *
 * Per job the worker creates a fresh QuickJS runtime (sync wasm variant, loaded once per worker) with a memory
 * limit, a stack limit and an interrupt deadline, installs exactly one host function (`__host`) and the
 * prelude that builds `context`, `console` and `doc`, evaluates the processor script and posts the final
 * run state back. `__host` is a synchronous call to the main thread: the request goes out on a dedicated
 * port and the worker blocks on `Atomics.wait` until the reply is there (`receiveMessageOnPort`). Time spent
 * blocked in a host call does not count against the script's deadline.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const { corePath, variantPath, rpcPort, signal, wasmModule } = workerData;
const flag = new Int32Array(signal);
let qjs;
let hostWaitMs = 0;

// Only calls that wait on something outside the sandbox stop the script's clock; cheap ones (log, metric,
// counters) count as script time, so a loop of them still ends at the deadline.
const WAITING_OPS = new Set(['sendToStep', 'authCall', 'restrictedData', 'sleep', 'stream.read', 'stream.available']);

function hostCall(op, args) {
  const started = Date.now();
  Atomics.store(flag, 0, 0);
  rpcPort.postMessage({ op, args });
  for (;;) {
    Atomics.wait(flag, 0, 0, 1000);
    const got = receiveMessageOnPort(rpcPort);
    if (got) { if (WAITING_OPS.has(op)) hostWaitMs += Date.now() - started; return got.message; }
  }
}

function toHandle(ctx, value) {
  if (value instanceof Uint8Array) return ctx.newArrayBuffer(value.slice().buffer);
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
    return toHandle(ctx, reply.value);
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

function evalIn(ctx, code, file) {
  const r = ctx.evalCode(code, file);
  if (r.error) { const e = describeError(ctx, r.error); r.error.dispose(); return { error: e }; }
  let value;
  if (ctx.typeof(r.value) === 'string') value = ctx.getString(r.value);
  r.value.dispose();
  return { value };
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

function finishRun(ctx, finish) {
  const r = ctx.callFunction(finish, ctx.undefined);
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

// One runtime per wasm instance is reused while runs end cleanly (a fresh context per run is what isolates
// runs); after a script error, an interrupt or a failure it is thrown away and the next run gets a new one.
let cachedRt;

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

function dropRuntime() {
  const rt = cachedRt;
  cachedRt = undefined;
  try { if (rt) rt.dispose(); } catch (e) { /* a runtime that hit its limits may not free cleanly */ }
}

function setGlobal(ctx, name, handle) {
  ctx.setProp(ctx.global, name, handle);
  handle.dispose();
}

function runInContext(ctx, rt, job, clock) {
  installHost(ctx);
  if (job.inBytes) setGlobal(ctx, '__inBytes', ctx.newArrayBuffer(job.inBytes.slice().buffer));
  setGlobal(ctx, '__input', ctx.newString(job.input));
  setGlobal(ctx, '__utilSource', ctx.newString(job.utilSource));
  const pre = ctx.evalCode(job.prelude, 'prelude.js');
  if (pre.error) {
    const error = describeError(ctx, pre.error);
    pre.error.dispose();
    return { kind: 'fail', error, interrupted: clock.interrupted };
  }
  const finish = pre.value;
  try {
    const run = evalIn(ctx, job.script, job.file);
    const scriptError = run.error || drainJobs(rt);
    const out = finishRun(ctx, finish);
    if (out.error) return { kind: 'fail', error: out.error, interrupted: clock.interrupted };
    return { kind: 'done', output: out.output, outBytes: out.bytes, scriptError, interrupted: clock.interrupted };
  } finally {
    finish.dispose();
  }
}

function runJob(job) {
  hostWaitMs = 0;
  const clock = { start: Date.now(), interrupted: false };
  let result;
  try {
    const rt = runtimeFor(job, clock);
    const ctx = rt.newContext();
    try { result = runInContext(ctx, rt, job, clock); } finally { ctx.dispose(); }
  } catch (e) {
    result = { kind: 'fail', error: { name: 'InternalError', message: String(e && e.message) }, interrupted: clock.interrupted };
  }
  if (result.kind !== 'done' || result.scriptError || result.interrupted) dropRuntime();
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
