// The least an agent must do before its first answer to a step that runs a script, in bare Node, as a bound for
// the agent's start: a `node:http` server and one worker thread with the QuickJS WebAssembly module that our
// sandbox uses, the worker started at once (in parallel with listening); each request evaluates the step's
// script in a fresh QuickJS context and answers with its result. No bootstrap, no workflow compiler, no realm
// hardening (ADR 0042), no limits.
//   node agent-floor.cjs PORT ENGINE_PACKAGE_JSON
'use strict';
const http = require('node:http');
const { Worker } = require('node:worker_threads');

const [, , port, enginePackageJson] = process.argv;
const worker = new Worker(
  `
  const { parentPort, workerData } = require('node:worker_threads');
  const { createRequire } = require('node:module');
  const req = createRequire(workerData);
  const { newQuickJSWASMModuleFromVariant } = req('quickjs-emscripten-core');
  const variant = req('@jitl/quickjs-wasmfile-release-sync');
  newQuickJSWASMModuleFromVariant(variant.default ?? variant).then((qjs) => {
    parentPort.on('message', (code) => {
      const ctx = qjs.newContext();
      const result = ctx.unwrapResult(ctx.evalCode(code));
      parentPort.postMessage(ctx.getString(result));
      result.dispose();
      ctx.dispose();
    });
  });
  `,
  { eval: true, workerData: enginePackageJson },
);
const waiting = [];
worker.on('message', (text) => waiting.shift()?.(text));
http
  .createServer((_req, res) => {
    waiting.push((text) => res.end(text));
    worker.postMessage("'hi'");
  })
  .listen(Number(port), '127.0.0.1');
