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

function hostCall(op, args) {
  const started = Date.now();
  Atomics.store(flag, 0, 0);
  rpcPort.postMessage({ op, args });
  for (;;) {
    Atomics.wait(flag, 0, 0, 1000);
    const got = receiveMessageOnPort(rpcPort);
    if (got) { hostWaitMs += Date.now() - started; return got.message; }
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

function readBytes(ctx) {
  const h = ctx.getProp(ctx.global, '__outBytes');
  let out;
  if (ctx.typeof(h) === 'object') { const life = ctx.getArrayBuffer(h); out = life.value.slice(); life.dispose(); }
  h.dispose();
  return out;
}

function runJob(job) {
  const rt = qjs.newRuntime();
  let interrupted = false;
  hostWaitMs = 0;
  const start = Date.now();
  try {
    rt.setMemoryLimit(job.memoryBytes);
    rt.setMaxStackSize(job.maxStackBytes);
    rt.setInterruptHandler(() => {
      if (Date.now() - start - hostWaitMs > job.timeMs) interrupted = true;
      return interrupted;
    });
    const ctx = rt.newContext();
    try {
      installHost(ctx);
      if (job.inBytes) {
        const b = ctx.newArrayBuffer(job.inBytes.slice().buffer);
        ctx.setProp(ctx.global, '__inBytes', b);
        b.dispose();
      }
      const input = ctx.newString(job.input);
      ctx.setProp(ctx.global, '__input', input);
      input.dispose();
      const pre = evalIn(ctx, job.prelude, 'prelude.js');
      if (pre.error) return { kind: 'fail', error: pre.error, interrupted };
      const run = evalIn(ctx, job.script, job.file);
      const scriptError = run.error;
      const out = evalIn(ctx, '__finish()', 'finish.js');
      if (out.error) return { kind: 'fail', error: out.error, interrupted };
      return { kind: 'done', output: out.value, outBytes: readBytes(ctx), scriptError, interrupted };
    } finally {
      ctx.dispose();
    }
  } catch (e) {
    return { kind: 'fail', error: { name: 'InternalError', message: String(e && e.message) }, interrupted };
  } finally {
    try { rt.dispose(); } catch (e) { /* a runtime that hit its limits may not free cleanly */ }
  }
}

(async () => {
  const core = require(corePath);
  const variant = require(variantPath);
  qjs = await core.newQuickJSWASMModuleFromVariant(core.newVariant(variant.default || variant, { wasmModule }));
  parentPort.on('message', (job) => {
    let result;
    try { result = runJob(job); }
    catch (e) { result = { kind: 'fail', error: { name: 'InternalError', message: String(e && e.message) } }; }
    parentPort.postMessage(result);
  });
  parentPort.postMessage({ kind: 'ready' });
})().catch((e) => { parentPort.postMessage({ kind: 'boot-failed', message: String(e && e.message) }); });
`;
