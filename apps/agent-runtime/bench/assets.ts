// pnpm --filter @org/agent-runtime bench:assets — loopback only; see README.md here. Never runs in CI.
// (4) An httpFile step serving a packaged asset zip beside express.static on the same files, measured in the
// same run, each server in its own child process.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize } from '@org/workflow-compiler';
import { writeAssetZip } from '../test/asset-zip.js';
import { tempDir } from '../test/fixtures.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CHILD_NODE_ARGS = (process.env['BENCH_CHILD_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const dir = tempDir();
const packager = generateKeyPair('authenticated');
const deployment = generateKeyPair('authenticated');

/** Text that compresses like source code: repeated words with some variety. */
function text(bytes: number, seed: string): string {
  const words = ['const', 'return', 'function', seed, 'value', '=>', '{', '}', 'item', 'index', ';', '\n'];
  let out = '';
  for (let i = 0; out.length < bytes; i++) out += words[(i * 7 + (i >> 3)) % words.length] + ' ' + (i % 97);
  return out.slice(0, bytes);
}

/** A small site: HTML, CSS, JSON, an incompressible image, and a script over one 64 KiB chunk. */
const FILES: Record<string, string | Uint8Array> = {
  'index.html': `<!doctype html><title>bench</title>${text(4 * 1024, 'div')}`,
  'style.css': text(16 * 1024, 'color'),
  'data.json': JSON.stringify({ items: Array.from({ length: 40 }, (_, i) => ({ i, name: `item ${i}` })) }),
  'logo.png': randomBytes(24 * 1024),
  'app.js': text(120 * 1024, 'module'),
};
const BIG = { 'big.bin': Buffer.concat([randomBytes(1024 * 1024), Buffer.from(text(1024 * 1024, 'pad'))]) };

const WORKFLOW = {
  workflows: [
    {
      name: 'assets',
      steps: [
        {
          stepId: 'site',
          type: 'httpFile',
          trigger: { http: { server: 'web', method: 'GET', path: '/static/.*' } },
        },
      ],
    },
  ],
};

function writeApp(): string {
  const path = join(dir, 'assets.oapp');
  const content = new TextEncoder().encode(canonicalize(WORKFLOW));
  writeFileSync(
    path,
    createPackage({
      packageId: 'assets',
      content,
      packagerSecretKey: packager.secretKey,
      recipients: [deployment.publicKey!],
    }),
  );
  return path;
}

function bootstrap(app: string, zip: string, port: number) {
  return [
    {
      deploymentId: 'assets',
      remoteConfiguration: app,
      packaging: { packageId: 'assets', packagerIdentities: ['packager'] },
      keys: [
        { id: 'packager', purpose: 'authenticated', type: 'public', keyHex: keyToHex(packager.publicKey!) },
        { id: 'self', purpose: 'authenticated', type: 'secret', keyHex: keyToHex(deployment.secretKey) },
      ],
      allowFileAccess: [{ id: 'site', directoryOrFile: zip, READ: true }],
      allowHttpServerAccess: [{ id: 'web', port, serveFromPackagedAsset: { packagedAssetFileId: 'site' } }],
    },
  ];
}

interface ChildServer {
  pid: number;
  port: number;
  stop(): void;
}

/** CPU seconds (user + system, all threads) a process has used so far (Linux /proc). */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

function spawnServer(
  args: string[],
  env: Record<string, string>,
  portOf: (l: Record<string, unknown>) => number | undefined,
) {
  const child = spawn(process.execPath, [...CHILD_NODE_ARGS, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    cwd: join(dirname(MAIN), '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise<ChildServer>((resolve, reject) => {
    let out = '';
    let found = false;
    child.stdout.on('data', (d: Buffer) => {
      if (found) return;
      out += d.toString();
      const lines = out.split('\n');
      out = lines.pop() ?? '';
      for (const line of lines) {
        const port = line.startsWith('{') ? portOf(JSON.parse(line) as Record<string, unknown>) : undefined;
        if (port === undefined) continue;
        found = true;
        return resolve({ pid: child.pid!, port, stop: () => child.kill('SIGTERM') });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

/** express.static on the extracted files, mounted where the agent's trigger serves them. */
const staticServer = (root: string) =>
  spawnServer(
    [
      '-e',
      `const express = require('express'); const app = express(); app.use('/static', express.static(${JSON.stringify(root)})); const s = app.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: s.address().port })));`,
    ],
    {},
    (l) => l['port'] as number | undefined,
  );

function agentServer(app: string, zip: string): Promise<ChildServer> {
  const port = 18000 + Math.floor(Math.random() * 1000);
  const text64 = Buffer.from(JSON.stringify(bootstrap(app, zip, port))).toString('base64');
  return spawnServer([MAIN], { AGENT_BOOTSTRAP: text64 }, (l) =>
    l['msg'] === 'listening' ? port : undefined,
  );
}

async function load(port: number, names: string[], seconds: number) {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 10,
    duration: seconds,
    requests: names.map((n) => ({ method: 'GET', path: `/static/${n}` })),
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, mibs: r.throughput.average / (1024 * 1024) };
}

interface Run {
  rps: number;
  mibs: number;
  /** Server CPU (all threads) per request, in microseconds. */
  cpuUs: number;
}

async function measure(server: ChildServer, names: string[]): Promise<Run> {
  await load(server.port, names, 2);
  const cpu0 = cpuOf(server.pid);
  const r = await load(server.port, names, SECONDS);
  const cpuUs = ((cpuOf(server.pid) - cpu0) * 1e6) / (r.rps * SECONDS);
  server.stop();
  return { ...r, cpuUs };
}

const mean = (runs: Run[], k: keyof Run) => runs.reduce((a, r) => a + r[k], 0) / runs.length;

/**
 * Both servers get the same uncounted 2 s warm-up, then `SECONDS` of load, in the order static, agent, agent,
 * static (so a drift of the machine's load hits both alike). Besides requests/s, each server's CPU time per
 * request: on a shared machine it moves less than the rates.
 */
async function compare(label: string, names: string[], root: string, app: string, zip: string) {
  const base: Run[] = [];
  const ours: Run[] = [];
  for (const kind of ['static', 'agent', 'agent', 'static']) {
    if (kind === 'static') base.push(await measure(await staticServer(root), names));
    else ours.push(await measure(await agentServer(app, zip), names));
  }
  const line = (r: Run[]) =>
    `${mean(r, 'rps').toFixed(0)} req/s (${mean(r, 'mibs').toFixed(1)} MiB/s, ${mean(r, 'cpuUs').toFixed(0)} µs CPU/request)`;
  console.log(`(4) ${label}, ${SECONDS} s after a 2 s warm-up, 10 connections, each server twice`);
  console.log(`    express.static: ${line(base)}`);
  console.log(`    agent httpFile: ${line(ours)}`);
  console.log(
    `    ratio ${((mean(ours, 'rps') / mean(base, 'rps')) * 100).toFixed(1)}% of express.static's requests/s (target >= 70%); CPU per request ${((mean(ours, 'cpuUs') / mean(base, 'cpuUs')) * 100).toFixed(0)}% of express.static's`,
  );
}

const root = join(dir, 'site');
mkdirSync(root);
for (const [name, content] of Object.entries({ ...FILES, ...BIG })) writeFileSync(join(root, name), content);
const app = writeApp();
const zip = await writeAssetZip(join(dir, 'site.zip'), { ...FILES, ...BIG });
await compare(
  `five files of a small site (${Object.keys(FILES).join(', ')}), deflated zip`,
  Object.keys(FILES),
  root,
  app,
  zip,
);
await compare('one 2 MiB file (half incompressible), deflated zip', Object.keys(BIG), root, app, zip);
