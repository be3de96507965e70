// pnpm --filter @org/packager-app bench (and the root `pnpm bench`): the packager hosted by the agent (the built
// dist/packager.oapp on a copy of the built bootstrap, apps/agent-runtime/dist/main.js) beside the Express service
// (apps/packager-api/dist/main.js), each in its own process on loopback, autocannon in this process. Build first
// (`pnpm build`). Never part of CI. Reported as ratios measured in the same run, with the load average:
//   1. throughput of /string-encrypt and /workflow-package: the same request bytes (apps/packager-api/bench/fixtures.ts),
//      the same connections, interleaved rounds; agent / Express req/s and the server CPU per request of each; and of
//      GET /health, the operation that does nothing: what serving a request costs each front-end by itself;
//   2. start time, process start to the first GET /health 200: the agent, the Express service and a bare node:http
//      server (bare-http.mjs), interleaved; agent / Express and each / bare.
// Variables: BENCH_DURATION_S (3), BENCH_ROUNDS (5), BENCH_CONNECTIONS (16), BENCH_START_ROUNDS (7),
// BENCH_CHILD_NODE_ARGS (node flags of the two packager processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import * as os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { stringEncryptRequest, workflowPackageRequest } from '../../packager-api/bench/fixtures.js';
import { cpuSeconds } from '../../packager-api/bench/processes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const APP = join(HERE, '..');
const ROOT = join(APP, '..', '..');
const AGENT_MAIN = join(ROOT, 'apps', 'agent-runtime', 'dist', 'main.js');
const EXPRESS_MAIN = join(ROOT, 'apps', 'packager-api', 'dist', 'main.js');
const BARE_MAIN = join(HERE, 'bare-http.mjs');
const BUILT_BOOTSTRAP = join(APP, 'dist', 'packager.bootstrap.json');

const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 3);
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 5));
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 16);
const START_ROUNDS = Math.max(1, Number(process.env['BENCH_START_ROUNDS'] ?? 7));
const CHILD_NODE_ARGS = (process.env['BENCH_CHILD_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** The aim of issue 26: the hosted packager serves at least this share of the Express service's requests. */
const AIM = 0.8;

const dir = mkdtempSync(join(os.tmpdir(), 'packager-app-bench-'));
const resources = join(dir, 'resources');

/** A port that was free a moment ago (the bootstrap names a fixed port). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The built bootstrap on `port`, reading `resources` only; written mode 0600 (it holds the deployment's key). */
function bootstrapOn(port: number): string {
  const records = JSON.parse(readFileSync(BUILT_BOOTSTRAP, 'utf8')) as Record<string, unknown>[];
  const r = records[0]!;
  r['allowHttpServerAccess'] = [{ id: 'api', port }];
  r['allowFileAccess'] = [{ id: 'community-resources', directoryOrFile: resources, READ: true, LIST: true }];
  r['data'] = { resourceIds: ['community-resources'] };
  const path = join(dir, `bootstrap-${port}.json`);
  writeFileSync(path, JSON.stringify([r]), { mode: 0o600 });
  return path;
}

type Kind = 'agent' | 'express' | 'bare';

interface Started {
  kind: Kind;
  child: ChildProcess;
  port: number;
  /** Milliseconds from spawn to the first GET /health 200. */
  startMs: number;
}

/** One GET /health: its status, or 0 when the connection is refused. */
function health(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
  });
}

/** Spawns one server (its output discarded, as each writes a log line per request) and polls until /health is 200. */
async function start(kind: Kind): Promise<Started> {
  const port = await freePort();
  const [args, env] =
    kind === 'agent'
      ? [
          [...CHILD_NODE_ARGS, AGENT_MAIN, bootstrapOn(port)],
          { AGENT_ADMIN_PORT: 'off', AGENT_DATA_DIR: join(dir, 'agent-data') },
        ]
      : kind === 'express'
        ? [[...CHILD_NODE_ARGS, EXPRESS_MAIN], { PORT: String(port), PACKAGER_RESOURCE_DIRS: resources }]
        : [[BARE_MAIN], { PORT: String(port) }];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  for (;;) {
    if (exited !== undefined) throw new Error(`${kind} exited with ${exited} before it answered /health`);
    if ((await health(port)) === 200) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  return { kind, child, port, startMs: performance.now() - t0 };
}

function stop(s: Started): Promise<void> {
  return new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve();
    s.child.once('exit', () => resolve());
    s.child.kill('SIGTERM');
  });
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

interface Figures {
  rps: number;
  p99: number;
  errors: number;
  /** CPU time of the server process (all threads) per request, µs. */
  cpuUs: number;
}

async function load(opts: autocannon.Options, pid: number | undefined): Promise<Figures> {
  const cpu0 = cpuSeconds(pid);
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...opts });
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    cpuUs: ((cpuSeconds(pid) - cpu0) * 1e6) / Math.max(1, r.requests.total),
  };
}

async function throughput(): Promise<boolean> {
  const s = stringEncryptRequest();
  const w = workflowPackageRequest();
  const post = (req: typeof s, accept: string): Partial<autocannon.Options> => ({
    method: 'POST',
    headers: { 'content-type': req.contentType, accept },
    body: req.payload,
  });
  // /health is the operation that does nothing: the cost of serving a request through each front-end alone.
  const endpoints = [
    { path: '/string-encrypt', request: post(s, 'text/plain'), aim: true },
    { path: '/workflow-package', request: post(w, 'application/octet-stream'), aim: true },
    { path: '/health', request: {}, aim: false },
  ];
  const [agent, express] = [await start('agent'), await start('express')];
  try {
    const targets = endpoints.flatMap((ep) =>
      [agent, express].map((server) => ({
        name: `${ep.path} ${server.kind}`,
        path: ep.path,
        kind: server.kind,
        pid: server.child.pid,
        opts: {
          url: `http://127.0.0.1:${server.port}${ep.path}`,
          ...ep.request,
        } satisfies autocannon.Options,
      })),
    );
    console.log(`throughput: load average before warm-up ${loadavg()}`);
    for (const t of targets) await autocannon({ ...t.opts, connections: 4, duration: 2 });
    const samples = new Map<string, Figures[]>(targets.map((t) => [t.name, []]));
    const loads: string[] = [];
    // Interleaved rounds, the order rotated each round: a change of the machine's load hits both front-ends alike.
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(loadavg());
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + round) % targets.length]!;
        samples.get(t.name)!.push(await load(t.opts, t.pid));
      }
      console.log(
        `round ${round + 1}/${ROUNDS} (load ${loads.at(-1)}): ` +
          targets.map((t) => `${t.name} ${samples.get(t.name)!.at(-1)!.rps.toFixed(0)}`).join(', ') +
          ' req/s',
      );
    }
    console.log(
      `\nautocannon: ${CONNECTIONS} connections, ${DURATION_S} s per target and round, ${ROUNDS} interleaved rounds, ` +
        `loopback, Node ${process.version}, ${os.cpus().length} cores`,
    );
    const row = (cells: string[]) =>
      console.log(cells.map((c, i) => (i === 0 ? c.padEnd(18) : c.padStart(16))).join(''));
    row([
      'endpoint',
      'agent req/s',
      'Express req/s',
      'agent/Express',
      'p99 ms agent',
      'p99 ms Express',
      'CPU us agent',
      'CPU us Express',
      'errors',
    ]);
    let met = true;
    for (const ep of endpoints) {
      const a = samples.get(`${ep.path} agent`)!;
      const e = samples.get(`${ep.path} express`)!;
      const ratio = median(a.map((x, i) => x.rps / e[i]!.rps));
      const errors = [...a, ...e].reduce((n, x) => n + x.errors, 0);
      if (ep.aim) met &&= ratio >= AIM && errors === 0;
      const m = (xs: Figures[], f: (x: Figures) => number) => median(xs.map(f)).toFixed(0);
      row([
        ep.path,
        m(a, (x) => x.rps),
        m(e, (x) => x.rps),
        `${ratio.toFixed(2)}x`,
        m(a, (x) => x.p99),
        m(e, (x) => x.p99),
        m(a, (x) => x.cpuUs),
        m(e, (x) => x.cpuUs),
        String(errors),
      ]);
    }
    console.log(
      '(agent/Express: the median of the ratios within each round; CPU us: server process CPU time, all threads, ' +
        'per request)',
    );
    console.log(`load average per round (1, 5, 15 min): ${loads.join(' | ')}; at the end: ${loadavg()}`);
    console.log(
      `aim: agent >= ${AIM}x the Express service on /string-encrypt and /workflow-package, zero errors: ` +
        (met ? 'met' : 'NOT met'),
    );
    return met;
  } finally {
    await Promise.all([stop(agent), stop(express)]);
  }
}

async function startTimes(): Promise<void> {
  const kinds: Kind[] = ['bare', 'express', 'agent'];
  const times = new Map<Kind, number[]>(kinds.map((k) => [k, []]));
  console.log(`\nstart time: load average before ${loadavg()}`);
  for (let round = 0; round < START_ROUNDS; round++) {
    for (let i = 0; i < kinds.length; i++) {
      const s = await start(kinds[(i + round) % kinds.length]!);
      times.get(s.kind)!.push(s.startMs);
      await stop(s);
    }
  }
  const m = (k: Kind) => median(times.get(k)!);
  const ratio = (a: Kind, b: Kind) => median(times.get(a)!.map((x, i) => x / times.get(b)![i]!));
  console.log(`process start to the first GET /health 200, median of ${START_ROUNDS} interleaved rounds:`);
  for (const k of kinds) console.log(`  ${k.padEnd(8)} ${m(k).toFixed(0).padStart(6)} ms`);
  console.log(
    `  agent/Express ${ratio('agent', 'express').toFixed(2)}x, agent/bare ${ratio('agent', 'bare').toFixed(2)}x, ` +
      `Express/bare ${ratio('express', 'bare').toFixed(2)}x (ratios within each round, then the median); ` +
      `load average at the end: ${loadavg()}`,
  );
}

async function main(): Promise<void> {
  for (const [file, how] of [
    [BUILT_BOOTSTRAP, 'pnpm --filter @org/packager-app build'],
    [AGENT_MAIN, 'pnpm --filter @org/agent-runtime build'],
    [EXPRESS_MAIN, 'pnpm --filter @org/packager-api build'],
  ] as const) {
    if (!existsSync(file)) throw new Error(`${file} is missing: build first (${how})`);
  }
  mkdirSync(resources);
  try {
    await throughput();
    await startTimes();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
