// npx tsx bench/upload-ab.ts [dist/main.js of build B ...] — item (1) of run.ts, A/B between builds of the agent.
// Build A is this checkout's dist/main.js; each further argument is another build's dist/main.js (e.g. a copy of
// the tree at an earlier commit). Per round, in an order that rotates: the bare node:http counter and every build.
// Beside MiB/s and the process's CPU it reports each thread's CPU (user/system, /proc/<pid>/task) and context
// switches, so a change of the stream path shows up per thread. BENCH_UPLOAD_MIB (256), BENCH_ROUNDS (4).
// A build may carry node flags and environment variables of its own after its path, in one argument:
// 'dist/main.js --v8-pool-size=1' or 'dist/main.js AGENT_HEAP_GROWTH_PERCENT=0'; and `warm=<bytes>`, the size of
// its uncounted warm-up upload (else BENCH_WARM_BYTES, 1 KiB): 'dist/main.js warm=268435456' measures the same
// build once its upload path is compiled, in the same rounds as the fresh agent.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize } from '@org/workflow-compiler';
import { tempDir } from '../test/fixtures.js';
import { memoryOf, spawnChildServer, uploadMultipart, type ChildServer } from './upload-client.js';

const MiB = 1024 * 1024;
const TOTAL = Number(process.env['BENCH_UPLOAD_MIB'] ?? 256) * MiB;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 4);
const READ = Number(process.env['BENCH_READ_BYTES'] ?? MiB);
const CHILD_NODE_ARGS = (process.env['BENCH_CHILD_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const here = dirname(fileURLToPath(import.meta.url));
const builds = [
  join(here, '..', 'dist', 'main.js'),
  ...process.argv.slice(2).map((a) => {
    const [p, ...flags] = a.split(' ').filter(Boolean);
    return [resolve(p!), ...flags].join(' ');
  }),
];
const dir = tempDir();
const packager = generateKeyPair('authenticated');
const deployment = generateKeyPair('authenticated');

const workflow = {
  workflows: [
    {
      name: 'bench',
      steps: [
        {
          stepId: 'count',
          trigger: {
            http: { server: 'api', method: 'POST', path: '/count', multiPartUploadByteLimit: TOTAL },
          },
          resultsProcessor: {
            script: `const r = context.getStream(); let n = 0; for (;;) { const c = r.read(${READ}); if (c.length === 0) break; n += c.length; } context.setBody(String(n));`,
          },
        },
      ],
    },
  ],
};
const app = join(dir, 'bench.oapp');
writeFileSync(
  app,
  createPackage({
    packageId: 'bench',
    content: new TextEncoder().encode(canonicalize(workflow)),
    packagerSecretKey: packager.secretKey,
    recipients: [deployment.publicKey!],
  }),
);

const upload = uploadMultipart;

function spawnServer(
  args: string[],
  env: Record<string, string>,
  portOf: (l: Record<string, unknown>) => number | undefined,
  cwd: string,
): Promise<ChildServer> {
  return spawnChildServer(
    [...CHILD_NODE_ARGS, ...args],
    env,
    portOf,
    cwd,
    process.env['BENCH_STDOUT'] !== undefined,
  );
}

const BARE = `require('node:http').createServer((q, r) => { let n = 0; q.on('data', (c) => (n += c.length)); q.on('end', () => r.end(String(n))); }).listen(0, '127.0.0.1', function () { console.log(JSON.stringify({ port: this.address().port })); });`;

/** `NAME=value` tokens as an environment. */
const envOf = (tokens: string[]): Record<string, string> =>
  Object.fromEntries(tokens.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

/** A build argument: its `dist/main.js`, node flags, environment and warm-up size (see the top of this file). */
function parseBuild(build: string): {
  main: string;
  flags: string[];
  env: Record<string, string>;
  warm: number;
} {
  const [main, ...own] = build.split(' ') as [string, ...string[]];
  const warm = own.find((a) => a.startsWith('warm='))?.slice('warm='.length);
  return {
    main,
    flags: own.filter((a) => a.startsWith('-')),
    env: envOf(own.filter((a) => !a.startsWith('-') && !a.startsWith('warm='))),
    warm: Number(warm ?? process.env['BENCH_WARM_BYTES'] ?? 1024),
  };
}

function agent({ main, flags, env: ownEnv }: ReturnType<typeof parseBuild>): Promise<ChildServer> {
  const port = 18000 + Math.floor(Math.random() * 1000);
  const boot = [
    {
      deploymentId: 'bench',
      remoteConfiguration: app,
      packaging: { packageId: 'bench', packagerIdentities: ['packager'] },
      keys: [
        { id: 'packager', purpose: 'authenticated', type: 'public', keyHex: keyToHex(packager.publicKey!) },
        { id: 'self', purpose: 'authenticated', type: 'secret', keyHex: keyToHex(deployment.secretKey) },
      ],
      allowHttpServerAccess: [{ id: 'api', port }],
    },
  ];
  const extra = envOf((process.env['BENCH_AGENT_ENV'] ?? '').split(' ').filter(Boolean));
  const env = {
    ...extra,
    ...ownEnv,
    AGENT_BOOTSTRAP: Buffer.from(JSON.stringify(boot)).toString('base64'),
    AGENT_ADMIN_PORT: 'off',
  };
  return spawnServer(
    [...flags, main],
    env,
    (l) => (l['msg'] === 'listening' ? port : undefined),
    join(dirname(main), '..'),
  );
}

/** Per thread: name, user and system CPU seconds, context switches (voluntary + not). */
interface ThreadStat {
  name: string;
  user: number;
  sys: number;
  cs: number;
}
function threads(pid: number): Map<string, ThreadStat> {
  const out = new Map<string, ThreadStat>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const cs = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      out.set(tid, {
        name: tid === String(pid) ? 'main' : name,
        user: Number(f[11]) / 100,
        sys: Number(f[12]) / 100,
        cs: cs('voluntary_ctxt_switches') + cs('nonvoluntary_ctxt_switches'),
      });
    } catch {
      /* the thread ended */
    }
  }
  return out;
}
interface Figures {
  mibs: number;
  cpu: number;
  main: number;
  mainSys: number;
  worker: number;
  other: number;
  cs: number;
  growth: number;
}

/** CPU per thread between two snapshots: main, the sandbox worker (the other thread that switched most), the rest. */
function diff(a: Map<string, ThreadStat>, b: Map<string, ThreadStat>) {
  let main = 0,
    mainSys = 0,
    all = 0,
    cs = 0,
    worker = { cpu: 0, cs: -1 };
  for (const [tid, t] of b) {
    const s = a.get(tid) ?? { name: t.name, user: 0, sys: 0, cs: 0 };
    const cpu = t.user + t.sys - s.user - s.sys;
    all += cpu;
    cs += t.cs - s.cs;
    if (t.name === 'main') {
      main = cpu;
      mainSys = t.sys - s.sys;
    } else if (t.cs - s.cs > worker.cs) worker = { cpu, cs: t.cs - s.cs };
  }
  return { main, mainSys, worker: worker.cpu, other: all - main - worker.cpu, cs };
}

async function runBare(): Promise<Figures> {
  const s = await spawnServer(['-e', BARE], {}, (l) => l['port'] as number | undefined, here);
  const t0 = threads(s.pid);
  const r = await upload(s.port, '/', TOTAL);
  const t1 = threads(s.pid);
  s.stop();
  const d = diff(t0, t1);
  return { mibs: r.mibs, cpu: d.main + d.worker + d.other, ...d, growth: 0 };
}

async function runAgent(main: string): Promise<Figures> {
  const build = parseBuild(main);
  const s = await agent(build);
  await upload(s.port, '/count', build.warm);
  const before = memoryOf(s.pid);
  const t0 = threads(s.pid);
  const perfOut = process.env['BENCH_PERF'];
  const perf = perfOut
    ? spawn('perf', ['record', '-F', '2999', '-g', '-p', String(s.pid), '-o', perfOut], { stdio: 'ignore' })
    : undefined;
  if (perf) await new Promise((r) => setTimeout(r, 500));
  const r = await upload(s.port, '/count', TOTAL);
  const t1 = threads(s.pid);
  if (perf) {
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
  }
  const after = memoryOf(s.pid);
  s.stop();
  if (r.reply !== String(TOTAL)) throw new Error(`${main}: step counted ${r.reply}`);
  const d = diff(t0, t1);
  if (process.env['BENCH_THREADS'])
    for (const [tid, t] of t1) {
      const s0 = t0.get(tid);
      const c = t.user + t.sys - (s0 ? s0.user + s0.sys : 0);
      if (c > 0.005)
        console.log(
          `    ${tid} ${t.name} ${c.toFixed(2)} s (sys ${(t.sys - (s0?.sys ?? 0)).toFixed(2)}) cs ${t.cs - (s0?.cs ?? 0)}`,
        );
    }
  return { mibs: r.mibs, cpu: d.main + d.worker + d.other, ...d, growth: after.hwm - before.rss };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const names = ['bare', ...builds.map((_, i) => String.fromCharCode(65 + i))];
const results = new Map<string, Figures[]>(names.map((n) => [n, []]));
console.log(
  `upload A/B: ${TOTAL / MiB} MiB, reads of ${READ} bytes, ${ROUNDS} rounds; builds: ${builds.map((b, i) => `${names[i + 1]}=${b}`).join(' ')}`,
);
console.log(`load at the start ${load()}`);
for (let round = 0; round < ROUNDS; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length]!);
  if (round % 2) order.reverse();
  const line: string[] = [];
  for (const n of order) {
    const f = n === 'bare' ? await runBare() : await runAgent(builds[names.indexOf(n) - 1]!);
    results.get(n)!.push(f);
    line.push(
      `${n} ${f.mibs.toFixed(0)} MiB/s cpu ${f.cpu.toFixed(2)} (main ${f.main.toFixed(2)} sys ${f.mainSys.toFixed(2)}, worker ${f.worker.toFixed(2)}, other ${f.other.toFixed(2)}) cs ${f.cs}${n === 'bare' ? '' : ` growth ${(f.growth / MiB).toFixed(1)}`}`,
    );
  }
  console.log(`round ${round + 1} (load ${load()}): ${line.join(' | ')}`);
}
const bare = results.get('bare')!;
for (const n of names.slice(1)) {
  const r = results.get(n)!;
  const m = (k: keyof Figures) => median(r.map((f) => f[k]));
  const ratio = median(r.map((f, i) => f.mibs / bare[i]!.mibs));
  const cpuRatio = median(r.map((f, i) => bare[i]!.cpu / f.cpu));
  console.log(
    `${n}: median ${m('mibs').toFixed(0)} MiB/s, ratio ${(ratio * 100).toFixed(0)}% (by CPU ${(cpuRatio * 100).toFixed(0)}%), CPU ${m('cpu').toFixed(2)} s (main ${m('main').toFixed(2)}, worker ${m('worker').toFixed(2)}, other ${m('other').toFixed(2)}), ctx switches ${m('cs').toFixed(0)}, warm growth ${(m('growth') / MiB).toFixed(1)} MiB`,
  );
}
console.log(
  `bare: median ${median(bare.map((f) => f.mibs)).toFixed(0)} MiB/s, CPU ${median(bare.map((f) => f.cpu)).toFixed(2)} s; load now ${load()}`,
);
