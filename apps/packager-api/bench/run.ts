// pnpm bench: loads the packager (built dist/main.js) and a bare Express endpoint, each in its own process on
// loopback, with autocannon in this process: fixed duration and connections, in interleaved rounds (README.md).
import { existsSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encryptString, parseKey, wipe, type Key } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize, compileWorkflow } from '@org/workflow-compiler';
import autocannon from 'autocannon';
import { stringEncryptRequest, workflowPackageRequest, type BenchRequest } from './fixtures.js';
import { cpuSeconds, startChild } from './processes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const MAIN = process.env['BENCH_MAIN'] ?? join(HERE, '..', 'dist', 'main.js');
const MAIN_B = process.env['BENCH_MAIN_B'];
const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 4);
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 5));
const FLOOR_MS = 1000;
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 16);

interface Figures {
  name: string;
  rps: number;
  /** CPU time of the server process per request (user + system, from /proc), in microseconds. */
  cpuUs: number;
  p99: number;
  errors: number;
  requests: number;
}

async function load(name: string, opts: autocannon.Options, pid: number | undefined): Promise<Figures> {
  const cpu0 = cpuSeconds(pid);
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...opts });
  return {
    name,
    rps: r.requests.average,
    cpuUs: ((cpuSeconds(pid) - cpu0) * 1e6) / r.requests.total,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    requests: r.requests.total,
  };
}

/**
 * Microseconds per call of `fn`, run for `ms` after a warm-up, in this process (one core): elapsed time, and the
 * process's CPU time (user + system), which a loaded machine inflates much less.
 */
function microsPerCall(fn: () => void, ms: number): { wall: number; cpu: number } {
  for (let i = 0; i < 200; i++) fn();
  let calls = 0;
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 20; i++) fn();
    calls += 20;
    now = process.hrtime.bigint();
  }
  const cpu = process.cpuUsage(cpu0);
  return { wall: Number(now - start) / 1000 / calls, cpu: (cpu.user + cpu.system) / calls };
}

/** Parses every key of a request body as the service does (strict hex, sign-key and weak-key checks). */
function parseKeys(body: BenchRequest['body']): Map<string, Key> {
  return new Map(body.keys.map((k) => [k.id, parseKey(k)]));
}

interface Floor {
  name: string;
  micros: number;
  cpuMicros: number;
}

/**
 * The crypto each request needs, with the same keys and bytes and nothing else (no HTTP, JSON, multipart or
 * compiling): parsing the request's keys, then encrypting or packaging. Its inverse is the most requests per
 * second one core could serve if everything else were free.
 */
function cryptoFloor(
  s: BenchRequest,
  w: ReturnType<typeof workflowPackageRequest>,
  content: Uint8Array,
  ms: number,
): Floor[] {
  const plaintext = Buffer.from(s.stream);
  const stringCrypto = () => {
    const keys = parseKeys(s.body);
    encryptString(plaintext, keys.get('alice')!, keys.get('packager')!);
    keys.forEach((k) => wipe(k.bytes));
  };
  const packageCrypto = () => {
    const keys = parseKeys(w.body);
    createPackage({
      packageId: 'bench',
      content,
      packagerSecretKey: keys.get(w.body.packagerIdentityPrivateKey)!,
      recipients: w.body.encryptionKeys.map((id) => keys.get(id)!),
      signers: w.body.signers.map((x) => ({ secretKey: keys.get(x.key)!, signText: x.signText })),
    });
    keys.forEach((k) => wipe(k.bytes));
  };
  const sc = microsPerCall(stringCrypto, ms);
  const pc = microsPerCall(packageCrypto, ms);
  return [
    { name: '/string-encrypt', micros: sc.wall, cpuMicros: sc.cpu },
    { name: '/workflow-package', micros: pc.wall, cpuMicros: pc.cpu },
  ];
}

function loadavg(): string {
  return os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Target {
  name: string;
  opts: autocannon.Options;
  pid: number | undefined;
}

async function main(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error('build first: pnpm --filter @org/packager-api build');
  const resources = mkdtempSync(join(tmpdir(), 'bench-res-'));
  const serverEnv = { PORT: '0', PACKAGER_BIND_ADDRESS: '127.0.0.1', PACKAGER_RESOURCE_DIRS: resources };
  const app = await startChild([MAIN], serverEnv);
  // BENCH_MAIN_B: a second build of the service (say, another checkout's dist/main.js), loaded in the same
  // rounds, to measure a change against what it replaces on the same machine at the same time.
  const appB = MAIN_B === undefined ? undefined : await startChild([MAIN_B], serverEnv);
  const bare = await startChild(['--import', 'tsx', join(HERE, 'bare-server.ts')], {});
  try {
    const s = stringEncryptRequest();
    const w = workflowPackageRequest();
    const post = (
      port: number,
      path: string,
      req: { contentType: string; payload: Buffer },
      accept: string,
    ): autocannon.Options => ({
      url: `http://127.0.0.1:${port}${path}`,
      method: 'POST',
      headers: { 'content-type': req.contentType, accept },
      body: req.payload,
    });
    const targets: Target[] = [
      { name: 'bare GET /bare', opts: { url: `http://127.0.0.1:${bare.port}/bare` }, pid: bare.child.pid },
    ];
    const servers = [{ tag: '', port: app.port, pid: app.child.pid }];
    if (appB !== undefined) servers.push({ tag: ' [B]', port: appB.port, pid: appB.child.pid });
    for (const { tag, port, pid } of servers) {
      targets.push({
        name: `/string-encrypt${tag}`,
        opts: post(port, '/string-encrypt', s, 'text/plain'),
        pid,
      });
      targets.push({
        name: `/workflow-package${tag}`,
        opts: post(port, '/workflow-package', w, 'application/octet-stream'),
        pid,
      });
    }
    console.log(`load average before warm-up: ${loadavg()}`);
    // Warm up every server (JIT) before measuring.
    for (const t of targets) await autocannon({ ...t.opts, connections: 4, duration: 2 });
    const compiled = await compileWorkflow(Buffer.from(w.stream), { resourceDirs: [resources] });
    const content = Buffer.from(canonicalize(compiled.workflow), 'utf8');
    const samples = new Map<string, Figures[]>(targets.map((t) => [t.name, []]));
    const floors = new Map<string, Floor[]>([
      ['/string-encrypt', []],
      ['/workflow-package', []],
    ]);
    const loads: string[] = [];
    // Interleaved rounds: every target and the crypto floor once per round, the order rotated each round, so
    // a change in the machine's load hits all of them alike. Ratios are taken within a round, then the median.
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(loadavg());
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const t of order) samples.get(t.name)!.push(await load(t.name, t.opts, t.pid));
      for (const f of cryptoFloor(s, w, content, FLOOR_MS)) floors.get(f.name)!.push(f);
      const line = targets.map((t) => `${t.name} ${samples.get(t.name)!.at(-1)!.rps.toFixed(0)}`).join(', ');
      console.log(`round ${round + 1}/${ROUNDS} (load ${loads.at(-1)}): ${line} req/s`);
    }
    report(targets, samples, floors);
    console.log(`load average per round (1, 5, 15 min): ${loads.join(' | ')}; at the end: ${loadavg()}`);
  } finally {
    app.child.kill('SIGTERM');
    appB?.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
  }
}

function report(
  targets: readonly Target[],
  samples: ReadonlyMap<string, Figures[]>,
  floors: ReadonlyMap<string, Floor[]>,
): void {
  const bare = samples.get(targets[0]!.name)!;
  console.log(
    `\nautocannon: ${CONNECTIONS} connections, ${DURATION_S} s per target and round, ${ROUNDS} interleaved rounds, ` +
      `loopback, Node ${process.version}, ${os.cpus().length} cores`,
  );
  console.log(
    'target                     req/s (median)   p99 ms   errors   req/s vs bare   vs crypto floor   server CPU us/req',
  );
  const ratios = new Map<string, number>();
  for (const t of targets) {
    const xs = samples.get(t.name)!;
    const vsBare = median(xs.map((x, i) => x.rps / bare[i]!.rps));
    const base = t.name.replace(' [B]', '');
    const fl = floors.get(base);
    const vsFloor = fl === undefined ? undefined : median(xs.map((x, i) => (x.rps * fl[i]!.micros) / 1e6));
    ratios.set(t.name, vsFloor ?? vsBare);
    if (t.name.startsWith('/string')) ratios.set(t.name, vsBare);
    console.log(
      `${t.name.padEnd(26)} ${median(xs.map((x) => x.rps))
        .toFixed(0)
        .padStart(14)} ${median(xs.map((x) => x.p99))
        .toFixed(1)
        .padStart(8)}` +
        ` ${String(xs.reduce((a, x) => a + x.errors, 0)).padStart(8)} ${(100 * vsBare).toFixed(1).padStart(14)}%` +
        ` ${vsFloor === undefined ? '—'.padStart(17) : `${(100 * vsFloor).toFixed(1).padStart(16)}%`}` +
        ` ${median(xs.map((x) => x.cpuUs))
          .toFixed(0)
          .padStart(19)}`,
    );
  }
  console.log(
    'crypto alone per request (same keys and bytes, in this process, no HTTP; median of the rounds):',
  );
  for (const [name, fs] of floors) {
    const m = median(fs.map((f) => f.micros));
    console.log(
      `  ${name.padEnd(18)} ${m.toFixed(0).padStart(5)} us  -> at most ${(1e6 / m).toFixed(0)} req/s per core` +
        ` (CPU time ${median(fs.map((f) => f.cpuMicros)).toFixed(0)} us per call)`,
    );
  }
  // The same two ratios from CPU time per request (server process, /proc) instead of req/s: what one request costs,
  // which the machine's load disturbs far less than throughput.
  console.log('CPU time per request, median of the rounds (ratios within each round, then the median):');
  for (const t of targets.slice(1)) {
    const xs = samples.get(t.name)!;
    const fl = floors.get(t.name.replace(' [B]', ''))!;
    const vsBare = median(xs.map((x, i) => bare[i]!.cpuUs / x.cpuUs));
    const vsFloor = median(xs.map((x, i) => fl[i]!.cpuMicros / x.cpuUs));
    console.log(
      `  ${t.name.padEnd(24)} bare/ours ${(100 * vsBare).toFixed(1).padStart(5)}%   crypto floor/ours ` +
        `${(100 * vsFloor).toFixed(1).padStart(5)}%`,
    );
  }
  const errors = [...samples.values()].every((xs) => xs.every((x) => x.errors === 0));
  const se = ratios.get('/string-encrypt')!;
  const wp = ratios.get('/workflow-package')!;
  console.log(
    `targets: /string-encrypt >= 60% of bare (${(100 * se).toFixed(1)}%), /workflow-package >= 70% of its crypto ` +
      `floor (${(100 * wp).toFixed(1)}%), zero errors (${errors ? 'yes' : 'no'}): ` +
      `${se >= 0.6 && wp >= 0.7 && errors ? 'met' : 'NOT met'}`,
  );
}

await main();
