// pnpm --filter @org/agent-runtime bench — loopback only; see README.md here. Never runs in CI.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize } from '@org/workflow-compiler';
import { tempDir } from '../test/fixtures.js';
import {
  abortedUpload,
  memoryOf,
  spawnChildServer,
  uploadMultipart,
  type ChildServer,
} from './upload-client.js';

const MiB = 1024 * 1024;
const UPLOAD_BYTES = Number(process.env['BENCH_UPLOAD_MIB'] ?? 256) * MiB;
const RPS_SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
/** Baseline/agent pairs per item; the order alternates (ABAB) and the median ratio is reported. */
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
/** Seconds of the sustained-load memory item (5); 0 skips it. */
const LOAD_SECONDS = Number(process.env['BENCH_LOAD_SECONDS'] ?? 60);
/** Seconds item (5) then waits without load before it measures once more (workers ending when idle); 0 skips. */
const IDLE_SECONDS = Number(process.env['BENCH_IDLE_SECONDS'] ?? 0);
/** Item (5) breaks the agent's resident memory down (`/proc/<pid>/smaps`, a heap probe in every thread) unless 0. */
const BREAKDOWN = process.env['BENCH_BREAKDOWN'] !== '0';
/** Aborted uploads of item (6). */
const BURST_UPLOADS = Number(process.env['BENCH_BURST_UPLOADS'] ?? 3000);
/** Seconds item (6) watches the agent after the burst. */
const BURST_IDLE_SECONDS = Number(process.env['BENCH_BURST_IDLE_SECONDS'] ?? 60);
/** Items to run, e.g. `1,5`; all when unset. */
const ONLY = process.env['BENCH_ONLY']?.split(',');
/** Extra node flags for the servers under test, e.g. `--cpu-prof` (space-separated). */
const CHILD_NODE_ARGS = (process.env['BENCH_CHILD_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** Node flags for the agent only (as a deployment would start it), e.g. `--max-semi-space-size=2`. */
const AGENT_NODE_ARGS = (process.env['BENCH_AGENT_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** Environment for the agent only, e.g. `MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=2` (space-separated). */
const AGENT_ENV = Object.fromEntries(
  (process.env['BENCH_AGENT_ENV'] ?? '')
    .split(' ')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
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
  const content = new TextEncoder().encode(canonicalize(workflow));
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

/** Streams a multipart upload of `total` bytes (default `BENCH_UPLOAD_MIB`); returns MiB/s and the reply. */
function upload(port: number, path: string, total = UPLOAD_BYTES): Promise<{ mibs: number; reply: string }> {
  return uploadMultipart(port, path, total);
}

const BARE_SERVERS = {
  // Counts the request body bytes, like the agent's counting step.
  count: `require('node:http').createServer((q, r) => { let n = 0; q.on('data', (c) => (n += c.length)); q.on('end', () => r.end(String(n))); }).listen(0, '127.0.0.1', function () { console.log(JSON.stringify({ port: this.address().port })); });`,
  // Echoes a JSON body as text, like the agent's echo step.
  echo: `const express = require('express'); const app = express(); app.use(express.text({ type: 'application/json' })); app.post('/echo', (q, r) => r.type('application/json').send(q.body)); const s = app.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: s.address().port })));`,
};

function spawnServer(
  args: string[],
  env: Record<string, string>,
  portOf: (line: Record<string, unknown>) => number | undefined,
): Promise<ChildServer> {
  return spawnChildServer([...CHILD_NODE_ARGS, ...args], env, portOf, join(dirname(MAIN), '..'));
}

const bareServer = (kind: keyof typeof BARE_SERVERS) =>
  spawnServer(['-e', BARE_SERVERS[kind]], {}, (l) => l['port'] as number | undefined);

function agentServer(
  path: string,
  extra: { args: string[]; env: Record<string, string> } = { args: [], env: {} },
): Promise<ChildServer> {
  const port = 18000 + Math.floor(Math.random() * 1000);
  const text = Buffer.from(JSON.stringify(bootstrap(path, port))).toString('base64');
  return spawnServer(
    [...AGENT_NODE_ARGS, ...extra.args, MAIN],
    { ...AGENT_ENV, ...extra.env, AGENT_BOOTSTRAP: text },
    (l) => (l['msg'] === 'listening' ? port : undefined),
  );
}

/** CPU seconds (user + system, all threads) a process has used so far (Linux /proc). */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

const mib = (n: number) => (n / MiB).toFixed(1);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const range = (xs: number[], f: (x: number) => string) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

async function uploadBare(): Promise<{ mibs: number; cpu: number }> {
  const bare = await bareServer('count');
  const cpu0 = cpuOf(bare.pid);
  const base = await upload(bare.port, '/');
  const cpu = cpuOf(bare.pid) - cpu0;
  bare.stop();
  return { mibs: base.mibs, cpu };
}

async function uploadAgent(
  path: string,
): Promise<{ mibs: number; cpu: number; growth: number; fromStart: number }> {
  const agent = await agentServer(path);
  const cold = memoryOf(agent.pid);
  await upload(agent.port, '/count', 1024); // warm-up: the first run starts the sandbox worker
  const before = memoryOf(agent.pid);
  const cpu0 = cpuOf(agent.pid);
  const ours = await upload(agent.port, '/count');
  const cpu = cpuOf(agent.pid) - cpu0;
  const after = memoryOf(agent.pid);
  agent.stop();
  if (ours.reply !== String(UPLOAD_BYTES)) throw new Error(`step counted ${ours.reply}`);
  return { mibs: ours.mibs, cpu, growth: after.hwm - before.rss, fromStart: after.hwm - cold.rss };
}

async function benchUpload(path: string): Promise<void> {
  console.log(
    `(1) ${UPLOAD_BYTES / MiB} MiB multipart upload into a counting step (servers in child processes), ${ROUNDS} rounds, order alternating`,
  );
  const ratios: number[] = [],
    cpuRatios: number[] = [],
    growths: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const l = load();
    let base, ours;
    if (round % 2 === 0) {
      base = await uploadBare();
      ours = await uploadAgent(path);
    } else {
      ours = await uploadAgent(path);
      base = await uploadBare();
    }
    ratios.push(ours.mibs / base.mibs);
    cpuRatios.push(base.cpu / ours.cpu);
    growths.push(ours.growth);
    console.log(
      `    round ${round + 1} (load ${l}): bare node:http ${base.mibs.toFixed(0)} MiB/s (CPU ${base.cpu.toFixed(2)} s)   agent ${ours.mibs.toFixed(0)} MiB/s (CPU ${ours.cpu.toFixed(2)} s)   ratio ${((ours.mibs / base.mibs) * 100).toFixed(0)}%   resident growth ${mib(ours.growth)} MiB warm, ${mib(ours.fromStart)} MiB from start`,
    );
  }
  const pct = (x: number) => (x * 100).toFixed(0) + '%';
  console.log(
    `    median ratio ${pct(median(ratios))} (${range(ratios, pct)}; target >= 60%); by CPU ${pct(median(cpuRatios))} (${range(cpuRatios, pct)})   median warm growth ${mib(median(growths))} MiB (${range(growths, mib)}; target < 48 MiB)   load now ${load()}`,
  );
}

async function rps(port: number, path: string, seconds = RPS_SECONDS): Promise<number> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'POST',
    connections: 10,
    duration: seconds,
    headers: { 'content-type': 'application/json' },
    body: '{"hello":"world","n":1}',
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

// Each server first gets the same 2 s of load, not counted: JIT, and for the agent its sandbox workers and
// their realms (start-up is item 3). The figures are steady state.
// Also the server's CPU time per request (all its threads, /proc): it moves less than the rates on a shared machine.
async function echoOf(server: Promise<ChildServer>): Promise<{ rps: number; cpuUs: number }> {
  const s = await server;
  await rps(s.port, '/echo', 2);
  const cpu0 = cpuOf(s.pid);
  const n = await rps(s.port, '/echo');
  const cpuUs = ((cpuOf(s.pid) - cpu0) * 1e6) / (n * RPS_SECONDS);
  s.stop();
  return { rps: n, cpuUs };
}

async function benchEcho(path: string): Promise<void> {
  console.log(
    `(2) JSON echo, ${RPS_SECONDS} s after a 2 s warm-up, 10 connections (servers in child processes), ${ROUNDS} rounds, order alternating`,
  );
  const ratios: number[] = [],
    cpuRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const l = load();
    let base, ours;
    if (round % 2 === 0) {
      base = await echoOf(bareServer('echo'));
      ours = await echoOf(agentServer(path));
    } else {
      ours = await echoOf(agentServer(path));
      base = await echoOf(bareServer('echo'));
    }
    ratios.push(ours.rps / base.rps);
    cpuRatios.push(base.cpuUs / ours.cpuUs);
    console.log(
      `    round ${round + 1} (load ${l}): bare Express ${base.rps.toFixed(0)} req/s (${base.cpuUs.toFixed(0)} µs CPU/req)   agent ${ours.rps.toFixed(0)} req/s (${ours.cpuUs.toFixed(0)} µs)   ratio ${((ours.rps / base.rps) * 100).toFixed(1)}%; CPU per request ${((base.cpuUs / ours.cpuUs) * 100).toFixed(0)}% of the baseline's rate`,
    );
  }
  const pct = (x: number) => (x * 100).toFixed(1) + '%';
  console.log(
    `    median ratio ${pct(median(ratios))} (${range(ratios, pct)}; target >= 40%); by CPU per request ${pct(median(cpuRatios))} (${range(cpuRatios, pct)})   load now ${load()}`,
  );
}

/**
 * Resident bytes of a process by kind of mapping (Linux `/proc/<pid>/smaps`). A wasm memory (QuickJS's heap) is
 * an accessible mapping followed by the rest of its reservation, several GiB without access; a glibc thread arena
 * starts at a multiple of 64 MiB; V8 heaps, thread stacks and the rest of `malloc` are the other anonymous ones.
 */
function residentByKind(pid: number): Record<string, number> {
  const maps: { start: number; end: number; perm: string; path: string; rss: number }[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m)
      maps.push({ start: parseInt(m[1]!, 16), end: parseInt(m[2]!, 16), perm: m[3]!, path: m[4]!, rss: 0 });
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) maps[maps.length - 1]!.rss = Number(rss[1]) * 1024;
  }
  const out: Record<string, number> = {};
  maps.forEach((m, i) => {
    const next = maps[i + 1];
    let kind;
    if (/\/node$/.test(m.path)) kind = 'node binary';
    else if (/\.(so[.0-9]*|node)$/.test(m.path)) kind = 'libraries';
    else if (m.path === '[heap]') kind = 'brk heap';
    else if (m.path !== '') kind = 'other files';
    else if (next && next.start === m.end && next.perm === '---p' && next.end - next.start >= 2 ** 30)
      kind = 'wasm';
    else if (m.start % 2 ** 26 === 0 && m.perm === 'rw-p') kind = 'malloc arenas';
    else kind = 'anonymous';
    out[kind] = (out[kind] ?? 0) + m.rss;
  });
  return out;
}

/** The heap probe's latest figures per live thread (`bench/probe.cjs`). */
function probed(
  probeDir: string,
): { threadId: number; spaces: Record<string, number>; arrayBuffers: number }[] {
  const now = Date.now();
  return readdirSync(probeDir)
    .map(
      (f) =>
        JSON.parse(readFileSync(join(probeDir, f), 'utf8')) as ReturnType<typeof probed>[number] & {
          at: number;
        },
    )
    .filter((p) => now - p.at < 3000)
    .sort((a, b) => a.threadId - b.threadId);
}

/** One line of item (5)'s breakdown: VmRSS, smaps by kind, and per thread its V8 heap (new/old/code/other). */
function breakdown(label: string, pid: number, probeDir: string): void {
  const { rss } = memoryOf(pid);
  console.log(`    ${label}: VmRSS ${mib(rss)} MiB (load ${load()})`);
  if (!BREAKDOWN) return;
  const kinds = Object.entries(residentByKind(pid)).sort((a, b) => b[1] - a[1]);
  console.log(`      smaps: ${kinds.map(([k, v]) => `${k} ${mib(v)}`).join(', ')}`);
  for (const p of probed(probeDir)) {
    const s = p.spaces;
    const total = Object.values(s).reduce((a, b) => a + b, 0);
    const other = total - (s['new_space'] ?? 0) - (s['old_space'] ?? 0) - (s['code_space'] ?? 0);
    console.log(
      `      ${p.threadId === 0 ? 'main thread' : `worker ${p.threadId}`}: V8 heap ${mib(total)} (new ${mib(s['new_space'] ?? 0)}, old ${mib(s['old_space'] ?? 0)}, code ${mib(s['code_space'] ?? 0)}, other ${mib(other)}), array buffers ${mib(p.arrayBuffers)}`,
    );
  }
}

/** (5) Resident memory of one agent under sustained load: echo requests with a 16 MiB upload every 10 s. */
async function benchLoad(path: string): Promise<void> {
  const probeDir = join(dir, 'probe');
  const agent = await agentServer(path, probeFor(probeDir));
  const cold = memoryOf(agent.pid);
  const l = load();
  console.log(`(5) ${LOAD_SECONDS} s of JSON echo (10 connections) and a 16 MiB upload every 10 s`);
  await new Promise((r) => setTimeout(r, 1500));
  breakdown('at start', agent.pid, probeDir);
  await rps(agent.port, '/echo', 2);
  await upload(agent.port, '/count', 16 * MiB);
  await new Promise((r) => setTimeout(r, 1500));
  breakdown('after a warm-up (2 s of echo, one upload)', agent.pid, probeDir);
  let uploads = 0;
  let stop = false;
  const uploader = (async () => {
    while (!stop) {
      const r = await upload(agent.port, '/count', 16 * MiB);
      if (r.reply !== String(16 * MiB)) throw new Error(`step counted ${r.reply}`);
      uploads++;
      for (let i = 0; i < 100 && !stop; i++) await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const cpu0 = cpuOf(agent.pid);
  const requests = await rps(agent.port, '/echo', LOAD_SECONDS);
  stop = true;
  await uploader;
  const cpuUs = ((cpuOf(agent.pid) - cpu0) * 1e6) / (requests * LOAD_SECONDS);
  const after = memoryOf(agent.pid);
  breakdown('after the load', agent.pid, probeDir);
  if (IDLE_SECONDS > 0) {
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    breakdown(`after ${IDLE_SECONDS} s idle`, agent.pid, probeDir);
  }
  agent.stop();
  console.log(
    `    ${requests.toFixed(0)} req/s, ${cpuUs.toFixed(0)} µs agent CPU per request (uploads included), ${uploads} uploads (load ${l} at the start, ${load()} at the end)`,
  );
  console.log(
    `    agent resident: ${mib(cold.rss)} MiB at start, ${mib(after.rss)} MiB after the load, peak ${mib(after.hwm)} MiB; growth ${mib(after.rss - cold.rss)} MiB (target after 5 minutes < 128 MiB resident)`,
  );
}

/** The probe's flags for the agent (item 5 and 6's breakdown), writing into a fresh `probeDir`. */
function probeFor(probeDir: string): { args: string[]; env: Record<string, string> } {
  rmSync(probeDir, { recursive: true, force: true });
  mkdirSync(probeDir);
  return BREAKDOWN
    ? {
        args: ['--require', join(dirname(fileURLToPath(import.meta.url)), 'probe.cjs')],
        env: { BENCH_PROBE_DIR: probeDir },
      }
    : { args: [], env: {} };
}

/**
 * (6) Memory given back after a burst (issue 27): the agent idle after a warm-up, then `BENCH_BURST_UPLOADS` multipart
 * uploads of 16 MiB announced, 256 KiB sent and the connection reset, 16 at a time; then its resident memory every
 * 10 s for `BENCH_BURST_IDLE_SECONDS` without load. Target: within 1.3 × the idle figure a minute after the burst.
 */
async function benchBurst(path: string): Promise<void> {
  const probeDir = join(dir, 'probe-burst');
  const agent = await agentServer(path, probeFor(probeDir));
  console.log(`(6) ${BURST_UPLOADS} aborted uploads, then ${BURST_IDLE_SECONDS} s idle`);
  await rps(agent.port, '/echo', 2);
  await upload(agent.port, '/count', 16 * MiB);
  await new Promise((r) => setTimeout(r, 3000));
  const idle = memoryOf(agent.pid).rss;
  breakdown('idle after a warm-up (2 s of echo, one upload)', agent.pid, probeDir);
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < BURST_UPLOADS) {
        next++;
        await abortedUpload(agent.port, '/count', 16 * MiB, 256 * 1024);
      }
    }),
  );
  const burst = memoryOf(agent.pid);
  console.log(`    burst took ${((Date.now() - started) / 1000).toFixed(1)} s; peak ${mib(burst.hwm)} MiB`);
  breakdown('right after the burst', agent.pid, probeDir);
  const figures: string[] = [];
  for (let t = 10; t <= BURST_IDLE_SECONDS; t += 10) {
    await new Promise((r) => setTimeout(r, 10_000));
    const { rss } = memoryOf(agent.pid);
    figures.push(`${t} s ${mib(rss)} (${(rss / idle).toFixed(2)}×)`);
    if (t === BURST_IDLE_SECONDS || t === 30) breakdown(`${t} s after the burst`, agent.pid, probeDir);
  }
  agent.stop();
  console.log(
    `    resident: idle ${mib(idle)} MiB; after the burst ${figures.join(', ')} (target ≤ 1.3× within 60 s)`,
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

const app = writeApp(WORKFLOW, 'bench');
console.log(`load average at the start ${load()} (1, 5, 15 min; ${availableParallelism()} cores)`);
const only = (n: number) => !ONLY || ONLY.includes(String(n));
if (only(1)) await benchUpload(app);
if (only(2)) await benchEcho(app);
if (only(3)) await benchStartup();
if (LOAD_SECONDS > 0 && only(5)) await benchLoad(app);
if (BURST_UPLOADS > 0 && only(6)) await benchBurst(app);
