// pnpm --filter @org/agent-runtime bench — loopback only; see README.md here. Never runs in CI.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import express from 'express';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { validateBootstrap } from '@org/workflow-compiler';
import { createApp } from '../src/app.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS } from '../src/config.js';
import { closeAll, listenAll } from '../src/listen.js';
import { tempDir } from '../test/fixtures.js';

const MiB = 1024 * 1024;
const UPLOAD_BYTES = Number(process.env['BENCH_UPLOAD_MIB'] ?? 256) * MiB;
const RPS_SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const dir = tempDir();
const packager = generateKeyPair('authenticated');
const deployment = generateKeyPair('authenticated');

const WORKFLOW = {
  workflows: [
    {
      name: 'bench',
      steps: [
        {
          stepId: 'count',
          trigger: {
            http: { server: 'api', method: 'POST', path: '/count', multiPartUploadByteLimit: UPLOAD_BYTES },
          },
          resultsProcessor: {
            script:
              'const r = context.getStream(); let n = 0; for (;;) { const c = r.read(1048576); if (c.length === 0) break; n += c.length; } context.setBody(String(n));',
          },
        },
        {
          stepId: 'echo',
          trigger: { http: { server: 'api', method: 'POST', path: '/echo' } },
          resultsProcessor: {
            script:
              "context.setHeader('Content-Type', 'application/json'); context.setBody(context.getBody());",
          },
        },
      ],
    },
  ],
};

function writeApp(workflow: object, name: string): string {
  const path = join(dir, `${name}.oapp`);
  const content = new TextEncoder().encode(JSON.stringify(workflow));
  writeFileSync(
    path,
    createPackage({
      packageId: 'bench',
      content,
      packagerSecretKey: packager.secretKey,
      recipients: [deployment.publicKey!],
    }),
  );
  return path;
}

function bootstrap(path: string, port = 18090) {
  return [
    {
      deploymentId: 'bench',
      remoteConfiguration: path,
      packaging: { packageId: 'bench', packagerIdentities: ['packager'] },
      keys: [
        { id: 'packager', purpose: 'authenticated', type: 'public', keyHex: keyToHex(packager.publicKey!) },
        { id: 'self', purpose: 'authenticated', type: 'secret', keyHex: keyToHex(deployment.secretKey) },
      ],
      allowHttpServerAccess: [{ id: 'api', port }],
    },
  ];
}

const BOUNDARY = 'benchBoundary7MA4YWxkTrZu0gW';
const HEAD = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="body"\r\n\r\n{"ref":"bench"}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="stream"; filename="f"\r\nContent-Type: application/octet-stream\r\n\r\n`;
const TAIL = `\r\n--${BOUNDARY}--\r\n`;

/** Streams a multipart upload of UPLOAD_BYTES from one reused 1 MiB chunk; returns MiB/s and the reply. */
function upload(port: number, path: string): Promise<{ mibs: number; reply: string }> {
  const chunk = Buffer.alloc(MiB, 0x61);
  const length = Buffer.byteLength(HEAD) + UPLOAD_BYTES + Buffer.byteLength(TAIL);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        path,
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length },
      },
      (res) => {
        let reply = '';
        res.on('data', (d: Buffer) => (reply += d.toString()));
        res.on('end', () => {
          const s = Number(process.hrtime.bigint() - started) / 1e9;
          resolve({ mibs: UPLOAD_BYTES / MiB / s, reply });
        });
      },
    );
    req.on('error', reject);
    req.write(HEAD);
    let sent = 0;
    const pump = () => {
      while (sent < UPLOAD_BYTES) {
        const n = Math.min(MiB, UPLOAD_BYTES - sent);
        sent += n;
        if (!req.write(n === MiB ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end(TAIL);
    };
    pump();
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

async function startAgent(path: string) {
  const agent = await createApp({
    bootstrap: validateBootstrap(JSON.stringify(bootstrap(path))),
    config: {
      stringSecretKeys: [],
      allowUnpackaged: false,
      allowPrivateNetworkHosts: [],
      limits: DEFAULT_LIMITS,
      timeouts: DEFAULT_TIMEOUTS,
    },
    sink: () => {},
    ports: { api: 0 },
  });
  const [l] = await listenAll(agent);
  return { agent, port: l!.port };
}

async function benchUpload(port: number): Promise<void> {
  const bare = createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => res.end(String(n)));
  });
  const barePort = await listen(bare);
  const base = await upload(barePort, '/');
  bare.close();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const ours = await upload(port, '/count');
  clearInterval(sampler);
  if (ours.reply !== String(UPLOAD_BYTES)) throw new Error(`step counted ${ours.reply}`);
  console.log(`(1) ${UPLOAD_BYTES / MiB} MiB multipart upload into a counting step`);
  console.log(
    `    bare node:http: ${base.mibs.toFixed(1)} MiB/s   agent: ${ours.mibs.toFixed(1)} MiB/s   ratio ${((ours.mibs / base.mibs) * 100).toFixed(0)}% (target >= 50%)`,
  );
  console.log(
    `    resident growth during the agent upload: ${((peak - rss0) / MiB).toFixed(1)} MiB (target < 64 MiB)`,
  );
}

async function rps(port: number, path: string): Promise<number> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'POST',
    connections: 10,
    duration: RPS_SECONDS,
    headers: { 'content-type': 'application/json' },
    body: '{"hello":"world","n":1}',
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

async function benchEcho(port: number): Promise<void> {
  const app = express();
  app.use(express.text({ type: 'application/json' }));
  app.post('/echo', (req, res) => void res.type('application/json').send(req.body as string));
  const bare = createServer(app);
  const barePort = await listen(bare);
  const base = await rps(barePort, '/echo');
  bare.close();
  const ours = await rps(port, '/echo');
  console.log(`(2) JSON echo, ${RPS_SECONDS} s, 10 connections`);
  console.log(
    `    bare Express: ${base.toFixed(0)} req/s   agent: ${ours.toFixed(0)} req/s   ratio ${((ours / base) * 100).toFixed(1)}% (target >= 30%)`,
  );
}

/** Spawns dist/main.js on a ~5 MB package and times spawn → first 200. */
async function benchStartup(): Promise<void> {
  const big = structuredClone(WORKFLOW) as { workflows: { steps: object[] }[] };
  big.workflows[0]!.steps.push({
    stepId: 'ballast',
    data: { blob: 'x'.repeat(5 * 1000 * 1000) },
    resultsProcessor: { script: "context.setBody('b')" },
  });
  const path = writeApp(big, 'big');
  const port = 18000 + Math.floor(Math.random() * 1000);
  const text = Buffer.from(JSON.stringify(bootstrap(path, port))).toString('base64');
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env['PATH'] ?? '', AGENT_BOOTSTRAP: text },
    stdio: 'ignore',
  });
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/echo`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  child.kill('SIGTERM');
  const { size } = await import('node:fs/promises').then((fs) => fs.stat(path));
  console.log(
    `(3) start-up to first request, ${(size / 1e6).toFixed(1)} MB package (spawn of dist/main.js included): ${ms.toFixed(0)} ms`,
  );
}

const { agent, port } = await startAgent(writeApp(WORKFLOW, 'bench'));
await benchUpload(port);
await benchEcho(port);
await closeAll(agent, 100);
await agent.stop(1000);
await benchStartup();
