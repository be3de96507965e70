// Whole commands as a user runs them, each a fresh process timed from spawn to exit (or to the first HTTP
// answer), beside a baseline measured in the same run, printed as ratios. A benchmark, never a test.
// Run (after `pnpm -s build`, at the repository root): pnpm bench:cli
//   BENCH_REPS (default 5), BENCH_LARGE_MIB (default 1024; 0 skips the large row), BENCH_ONLY=startup,64,large,agent,test,
//   BENCH_OAPP (default apps/cli/dist/main.js) and BENCH_AGENT (default apps/agent-runtime/dist/main.js): another
//   build to measure, for a before/after in one sitting
// Baselines: `node -e 0`; Debian's `age` + `minisign` (apt-get install -y age minisign; without them those rows
// print ours only); a bare Node stream copy of the same file (peak memory); a bare `node:http` server (agent
// ready). Runs alternate ours and the baseline so a warming page cache favours neither. Temporary files are
// removed at the end. Under some rows a bound, also measured in the run (floors/): the least work in bare Node
// (the format's per-byte work for package/open; a bare server with our sandbox's QuickJS worker for the agent),
// to tell which part of a ratio is ours to remove and which is Node's, the disk's or the format's.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  fmt,
  hasGnuTime,
  median,
  MiB,
  missingTools,
  run,
  sequence,
  sha256File,
  writeRandomFile,
  type Measure,
  type Step,
} from './measure.js';

const REPS = Math.max(1, Number(process.env['BENCH_REPS'] ?? '5') || 5);
const LARGE_MIB = Number(process.env['BENCH_LARGE_MIB'] ?? '1024');
const ONLY = process.env['BENCH_ONLY']?.split(',');
const only = (row: string): boolean => ONLY === undefined || ONLY.includes(row);
const HERE = dirname(fileURLToPath(import.meta.url));
const MAIN = process.env['BENCH_OAPP'] ?? join(HERE, '..', 'dist', 'main.js');
const AGENT = process.env['BENCH_AGENT'] ?? join(HERE, '..', '..', 'agent-runtime', 'dist', 'main.js');
const NODE = process.execPath;
/** Bounds in bare Node (floors/): the format's per-byte work, and a bare server with our QuickJS sandbox's module. */
const PAYLOAD_FLOOR = join(HERE, 'floors', 'payload-floor.cjs');
const AGENT_FLOOR = join(HERE, 'floors', 'agent-floor.cjs');
const ENGINE_PACKAGE_JSON = join(HERE, '..', '..', '..', 'packages', 'workflow-engine', 'package.json');

const dir = mkdtempSync(join(tmpdir(), 'oapp-bench-commands-'));
const f = (name: string): string => join(dir, name);
const oapp = (...args: string[]): Step => [NODE, [MAIN, ...args]];
const missing = missingTools(['age', 'age-keygen', 'minisign']);
const withAge = missing.length === 0;

interface Row {
  readonly what: string;
  readonly ours: number;
  readonly base: number | undefined;
  readonly baseName: string;
  readonly unit: 'ms' | 'MiB';
  readonly target: string;
  readonly met: boolean | undefined;
}
const rows: Row[] = [];

function row(
  what: string,
  ours: number,
  base: number | undefined,
  baseName: string,
  unit: 'ms' | 'MiB',
  target: string,
  met: ((ratio: number, ours: number, base: number) => boolean) | undefined,
): void {
  const ok = base === undefined || met === undefined ? undefined : met(ours / base, ours, base);
  rows.push({ what, ours, base, baseName, unit, target, met: ok });
  const ratio = base === undefined ? '' : `  ratio ${fmt(ours / base, 2)}×`;
  console.log(
    `  ${what}: ours ${fmt(ours, unit === 'ms' ? 0 : 1)} ${unit}` +
      (base === undefined ? '' : `, ${baseName} ${fmt(base, unit === 'ms' ? 0 : 1)} ${unit}`) +
      (target === ''
        ? ratio
        : `${ratio}  (target ${target}${ok === undefined ? '' : ok ? ': met' : ': NOT met'})`),
  );
}

/** The CPU time (user + system) of the row above, ours and the baseline's: what the other jobs of a shared machine
 * disturb least. Informative; the targets stay on wall time. */
function cpuLine(a: Measure, b: Measure | undefined): void {
  if (Number.isNaN(a.cpuMs)) return;
  const base =
    b === undefined || Number.isNaN(b.cpuMs)
      ? ''
      : `, baseline ${fmt(b.cpuMs, 0)} ms  ratio ${fmt(a.cpuMs / b.cpuMs, 2)}×`;
  console.log(`    (CPU time: ours ${fmt(a.cpuMs, 0)} ms${base})`);
}

/**
 * A bound measured in the same run, printed under a row: what the least work in bare Node takes against the row's
 * baseline, and ours against it. Informative; it tells how much of a ratio is ours to remove.
 */
function boundLine(
  what: string,
  floor: Measure,
  ours: Measure,
  base: Measure | undefined,
  baseName: string,
): void {
  const vsBase = base === undefined ? '' : `, ${fmt(floor.ms / base.ms, 2)}× ${baseName}`;
  console.log(
    `    (bound: ${what} ${fmt(floor.ms, 0)} ms${vsBase}; ours ${fmt(ours.ms / floor.ms, 2)}× the bound)`,
  );
}

/** Ours on an empty input (what does not grow with the file) and what is left per byte, against the bound's. */
function fixedLine(empty: Measure, ours: Measure, floor: Measure): void {
  console.log(
    `    (ours on an empty file ${fmt(empty.ms, 0)} ms; ours less that ${fmt(ours.ms - empty.ms, 0)} ms, ` +
      `${fmt((ours.ms - empty.ms) / floor.ms, 2)}× the bound)`,
  );
}

/** Alternates `a` and `b` REPS times (reps >= 1); returns the medians of time and peak memory. */
async function pair(
  a: () => Promise<Measure>,
  b: (() => Promise<Measure>) | undefined,
  reps = REPS,
): Promise<{ a: Measure; b: Measure | undefined }> {
  const as: Measure[] = [];
  const bs: Measure[] = [];
  for (let i = 0; i < reps; i++) {
    if (b !== undefined && i % 2 === 1) bs.push(await b());
    as.push(await a());
    if (b !== undefined && i % 2 === 0) bs.push(await b());
  }
  const med = (xs: Measure[]): Measure => ({
    ms: median(xs.map((x) => x.ms)),
    peakMiB: median(xs.map((x) => x.peakMiB)),
    cpuMs: median(xs.map((x) => x.cpuMs)),
  });
  return { a: med(as), b: b === undefined ? undefined : med(bs) };
}

// --- keys, shared by every row -----------------------------------------------------------------------------
function makeKeys(): void {
  run(NODE, [MAIN, 'keygen', '--purpose', 'authenticated', '-o', f('packager.key')]);
  for (let i = 1; i <= 10; i++)
    run(NODE, [MAIN, 'keygen', '--purpose', 'authenticated', '-o', f(`dep${i}.key`)]);
  for (let i = 1; i <= 3; i++) run(NODE, [MAIN, 'keygen', '--purpose', 'sign', '-o', f(`signer${i}.key`)]);
  if (withAge) {
    for (let i = 1; i <= 10; i++) run('age-keygen', ['-o', f(`id${i}.txt`)]);
    for (let i = 1; i <= 3; i++) run('minisign', ['-G', '-W', '-p', f(`ms${i}.pub`), '-s', f(`ms${i}.key`)]);
  }
}

const seal = (): string[] => [
  '--package-id',
  'bench-app',
  '--packager-key',
  f('packager.key'),
  ...Array.from({ length: 10 }, (_, i) => ['--recipient', f(`dep${i + 1}.pub`)]).flat(),
  ...Array.from({ length: 3 }, (_, i) => ['--signer', f(`signer${i + 1}.key`)]).flat(),
  '--sign-text',
  'bench release',
];
const policy = (): string[] => [
  '--package-id',
  'bench-app',
  '--packager',
  f('packager.pub'),
  '--required-signer',
  f('signer1.pub'),
  '--additional-signer',
  f('signer2.pub'),
  '--additional-signer',
  f('signer3.pub'),
  '--threshold',
  '2',
  '--key',
  f('dep1.key'),
];

// --- rows -----------------------------------------------------------------------------------------------------
async function startup(): Promise<void> {
  console.log('start-up');
  const r = await pair(
    () => sequence([oapp('--version')]),
    () => sequence([[NODE, ['-e', '0']]]),
    Math.max(REPS, 10),
  );
  row('oapp --version', r.a.ms, r.b!.ms, 'node -e 0', 'ms', '≤ 2×', (x) => x <= 2);
  cpuLine(r.a, r.b);
}

/** Package and open `mib` MiB: time against age + minisign, peak memory against a bare Node stream copy. */
async function packageAndOpen(mib: number, label: string, reps: number): Promise<void> {
  console.log(`package and open, ${label} (10 recipients, 3 signers; open checks all 3)`);
  const input = f(`in-${mib}.bin`);
  writeRandomFile(input, mib * MiB);
  const recipients = withAge
    ? Array.from({ length: 10 }, (_, i) => run('age-keygen', ['-y', f(`id${i + 1}.txt`)]).trim())
    : [];
  const oursPackage = () => sequence([oapp('package', '--raw', input, '-o', f('out.oapp'), ...seal())]);
  const oursOpen = () => sequence([oapp('open', f('out.oapp'), '-o', f('dec.oapp.bin'), ...policy())]);
  const agePackage = () =>
    sequence([
      ['age', [...recipients.flatMap((r) => ['-r', r]), '-o', f('out.age'), input]],
      ...[1, 2, 3].map((i): Step => [
        'minisign',
        ['-S', '-s', f(`ms${i}.key`), '-x', f(`out.age.${i}.minisig`), '-m', f('out.age')],
      ]),
    ]);
  const ageOpen = () =>
    sequence([
      ...[1, 2, 3].map((i): Step => [
        'minisign',
        ['-V', '-q', '-p', f(`ms${i}.pub`), '-x', f(`out.age.${i}.minisig`), '-m', f('out.age')],
      ]),
      ['age', ['-d', '-i', f('id1.txt'), '-o', f('dec.age.bin'), f('out.age')]],
    ]);
  const copy = () =>
    sequence([
      [
        NODE,
        [
          '-e',
          "require('node:stream').pipeline(require('node:fs').createReadStream(process.argv[1]), require('node:fs').createWriteStream(process.argv[2]), (e) => { if (e) throw e; })",
          input,
          f('copy.bin'),
        ],
      ],
    ]);
  const floor = (mode: 'seal' | 'open', sync: 'sync' | 'nosync') => () =>
    mode === 'seal'
      ? sequence([[NODE, [PAYLOAD_FLOOR, 'seal', input, f('floor.bin'), f('floor.key'), sync]]])
      : sequence([[NODE, [PAYLOAD_FLOOR, 'open', f('floor.bin'), f('floor.dec'), f('floor.key'), sync]]]);
  const p = await pair(oursPackage, withAge ? agePackage : undefined, reps);
  const o = await pair(oursOpen, withAge ? ageOpen : undefined, reps);
  const fp = await pair(floor('seal', 'sync'), floor('seal', 'nosync'), reps);
  const fo = await pair(floor('open', 'sync'), floor('open', 'nosync'), reps);
  // The fixed part of ours: the same commands on an empty file (start-up, keys, 10 stanzas, 3 signatures, fsync).
  writeFileSync(f('empty.bin'), '');
  const fixed = await pair(
    () => sequence([oapp('package', '--raw', f('empty.bin'), '-o', f('empty.oapp'), ...seal())]),
    () => sequence([oapp('open', f('empty.oapp'), '-o', f('empty.dec'), ...policy())]),
    reps,
  );
  const c = await pair(copy, undefined, reps);
  const want = await sha256File(input);
  if ((await sha256File(f('dec.oapp.bin'))) !== want) throw new Error('oapp open gave other bytes');
  const target = '≤ 1.5×';
  row(
    `oapp package --raw ${label}`,
    p.a.ms,
    p.b?.ms,
    'age -e + minisign -S ×3',
    'ms',
    target,
    (x) => x <= 1.5,
  );
  cpuLine(p.a, p.b);
  boundLine("the format's per-byte work in bare Node, fsync included", fp.a, p.a, p.b, 'age + minisign');
  boundLine('the same without fsync', fp.b!, p.a, p.b, 'age + minisign');
  fixedLine(fixed.a, p.a, fp.a);
  row(`oapp open ${label}`, o.a.ms, o.b?.ms, 'minisign -V ×3 + age -d', 'ms', target, (x) => x <= 1.5);
  cpuLine(o.a, o.b);
  boundLine("the format's per-byte work in bare Node, fsync included", fo.a, o.a, o.b, 'minisign + age');
  boundLine('the same without fsync', fo.b!, o.a, o.b, 'minisign + age');
  fixedLine(fixed.b!, o.a, fo.a);
  row(
    `peak memory, package ${label}`,
    p.a.peakMiB,
    c.a.peakMiB,
    'node stream copy',
    'MiB',
    target,
    (x) => x <= 1.5,
  );
  row(
    `peak memory, open ${label}`,
    o.a.peakMiB,
    c.a.peakMiB,
    'node stream copy',
    'MiB',
    target,
    (x) => x <= 1.5,
  );
  if (p.b !== undefined && o.b !== undefined)
    console.log(
      `    (age + minisign peak memory: package ${fmt(p.b.peakMiB)} MiB, open ${fmt(o.b.peakMiB)} MiB)`,
    );
  rmSync(input, { force: true });
  for (const x of [
    'out.oapp',
    'dec.oapp.bin',
    'out.age',
    'dec.age.bin',
    'copy.bin',
    'floor.bin',
    'floor.dec',
    'floor.key',
  ])
    rmSync(f(x), { force: true });
}

/** Spawn → first HTTP 200 on `url`, polling every 2 ms. */
/** The CPU time (user + system, all threads) a live process has used so far, from /proc (NaN elsewhere). */
function cpuMsOf(pid: number | undefined): number {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 a second on Linux); the name (field 2) may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

async function ready(
  cmd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  url: string,
): Promise<Measure> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`${args.join(' ')} exited before answering: ${stderr.slice(-1500)}`);
      const got = await fetch(url).then(
        (r) => r.status === 200,
        () => false,
      );
      if (got) return { ms: performance.now() - t0, peakMiB: NaN, cpuMs: cpuMsOf(child.pid) };
      if (performance.now() - t0 > 60_000) throw new Error(`no answer from ${url} within 60 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => (exited ? r(undefined) : child.once('exit', r)));
  }
}

let nextPort = 19000 + Math.floor(Math.random() * 2000);

async function agent(): Promise<void> {
  console.log('agent, start to the first HTTP answer');
  const workflow = {
    workflows: [
      {
        name: 'hello',
        steps: [
          {
            stepId: 'hello',
            trigger: { http: { server: 'api', method: 'GET', path: '/hello' } },
            resultsProcessor: { script: "context.setBody('hi');" },
          },
        ],
      },
    ],
  };
  writeFileSync(f('hello.workflow.json'), JSON.stringify(workflow));
  const big = structuredClone(workflow) as { workflows: { steps: object[] }[] };
  big.workflows[0]!.steps.push({
    stepId: 'ballast',
    data: { blob: 'x'.repeat(5 * 1000 * 1000) },
    resultsProcessor: { script: "context.setBody('b')" },
  });
  writeFileSync(f('big.workflow.json'), JSON.stringify(big));
  run(NODE, [
    MAIN,
    'package',
    f('big.workflow.json'),
    '-o',
    f('big.oapp'),
    '--package-id',
    'bench-app',
    '--packager-key',
    f('packager.key'),
    '--recipient',
    f('dep1.pub'),
    '--signer',
    f('signer1.key'),
    '--sign-text',
    'bench release',
  ]);
  const key = (file: string) => JSON.parse(run('cat', [f(file)])) as { keyHex: string };
  const bootstrap = (port: number, packaged: boolean) =>
    JSON.stringify([
      {
        deploymentId: 'bench',
        remoteConfiguration: packaged ? f('big.oapp') : f('hello.workflow.json'),
        ...(packaged
          ? {
              packaging: {
                packageId: 'bench-app',
                packagerIdentities: ['packager'],
                requiredSigners: ['signer1'],
              },
              keys: [
                {
                  id: 'packager',
                  purpose: 'authenticated',
                  type: 'public',
                  keyHex: key('packager.pub').keyHex,
                },
                { id: 'signer1', purpose: 'sign', type: 'public', keyHex: key('signer1.pub').keyHex },
                { id: 'self', purpose: 'authenticated', type: 'secret', keyHex: key('dep1.key').keyHex },
              ],
            }
          : {}),
        allowHttpServerAccess: [{ id: 'api', port, bindAddress: '127.0.0.1' }],
      },
    ]);
  const env = (port: number, packaged: boolean): NodeJS.ProcessEnv => ({
    PATH: process.env['PATH'] ?? '',
    AGENT_BOOTSTRAP: Buffer.from(bootstrap(port, packaged)).toString('base64'),
    AGENT_DATA_DIR: f(`data-${port}`),
    ...(packaged ? {} : { AGENT_ALLOW_UNPACKAGED: 'true' }),
  });
  const agentRun = (packaged: boolean) => () => {
    const port = nextPort++;
    mkdirSync(f(`data-${port}`));
    return ready(NODE, [AGENT], env(port, packaged), `http://127.0.0.1:${port}/hello`);
  };
  const bare = () => {
    const port = nextPort++;
    return ready(
      NODE,
      ['-e', `require('node:http').createServer((q, r) => r.end('hi')).listen(${port}, '127.0.0.1')`],
      { PATH: process.env['PATH'] ?? '' },
      `http://127.0.0.1:${port}/hello`,
    );
  };
  const floorServer = () => {
    const port = nextPort++;
    return ready(
      NODE,
      [AGENT_FLOOR, String(port), ENGINE_PACKAGE_JSON],
      { PATH: process.env['PATH'] ?? '' },
      `http://127.0.0.1:${port}/hello`,
    );
  };
  const tiny = await pair(agentRun(false), bare);
  const sandboxFloor = await pair(floorServer, bare);
  const pkg = await pair(agentRun(true), undefined);
  row(
    'agent ready, tiny unpackaged workflow',
    tiny.a.ms,
    tiny.b!.ms,
    'bare node:http',
    'ms',
    '≤ 3×',
    (x) => x <= 3,
  );
  cpuLine(tiny.a, tiny.b);
  boundLine(
    "bare node:http + a QuickJS worker (our sandbox's wasm) started at once, the script run per request",
    sandboxFloor.a,
    tiny.a,
    sandboxFloor.b,
    'bare node:http',
  );
  row(
    'agent ready, 5 MB package (3 checks, 1 signer)',
    pkg.a.ms,
    tiny.a.ms,
    'agent, tiny workflow',
    'ms',
    '≤ +500 ms',
    (_x, o, b) => o - b <= 500,
  );
  cpuLine(pkg.a, tiny.a);
}

async function firstTest(): Promise<void> {
  console.log('oapp test, one test');
  const root = f('tests-project');
  mkdirSync(join(root, 'tests'), { recursive: true });
  mkdirSync(join(root, 'resources'));
  writeFileSync(
    join(root, 'tests', 'flow.json'),
    JSON.stringify({
      workflows: [
        {
          name: 'bench',
          steps: [
            {
              stepId: 'poll',
              urlGenerator: { script: "context.setUrl('api', '/status');" },
              resultsProcessor: { script: "context.sendMetric('up', JSON.parse(context.getBody()).up);" },
            },
          ],
        },
      ],
    }),
  );
  writeFileSync(
    join(root, 'tests', 'boot.json'),
    JSON.stringify({ allowExternalHostAccess: [{ id: 'api', host: 'http://mockserver' }] }),
  );
  writeFileSync(
    join(root, 'tests', 't.test.json'),
    JSON.stringify({
      fromDirectory: '',
      testThisStep: 'poll',
      useThisTestConfigFile: 'flow.json',
      useThisTestBootstrapFile: 'boot.json',
      mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/status', returnThisBody: '{"up": 1}' }],
      theseMetricsShouldHaveBeenSent: [{ key: 'up', value: 1 }],
    }),
  );
  writeFileSync(
    join(root, 'testrunner.config.json'),
    JSON.stringify({ resourceDirs: ['resources'], testDirs: ['tests'] }),
  );
  const r = await pair(
    () => sequence([oapp('test')], root),
    () => sequence([oapp('--version')], root),
  );
  row('oapp test, one test (whole process)', r.a.ms, r.b!.ms, 'oapp --version', 'ms', '', undefined);
  cpuLine(r.a, r.b);
  row(
    'oapp test, the first test (whole process − oapp --version)',
    r.a.ms - r.b!.ms,
    undefined,
    '',
    'ms',
    '≤ 500 ms',
    undefined,
  );
  const met = r.a.ms - r.b!.ms <= 500;
  rows[rows.length - 1] = { ...rows[rows.length - 1]!, met };
}

console.log(`whole commands, ${new Date().toISOString()}`);
console.log(
  `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ` +
    `${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; median of ${REPS}; peak RSS from ${hasGnuTime ? 'GNU time -v' : '10 ms VmRSS samples'}` +
    (withAge
      ? ''
      : `; age/minisign rows without baseline: ${missing.join(', ')} not found (apt-get install -y age minisign)`),
);
try {
  makeKeys();
  if (only('startup')) await startup();
  if (only('64')) await packageAndOpen(64, '64 MiB', REPS);
  if (only('large') && LARGE_MIB > 0) await packageAndOpen(LARGE_MIB, `${LARGE_MIB} MiB`, Math.min(REPS, 3));
  if (only('agent')) await agent();
  if (only('test')) await firstTest();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const judged = rows.filter((r) => r.met !== undefined);
console.log(
  `\ntargets: ${judged.filter((r) => r.met).length} of ${judged.length} met` +
    (judged.some((r) => !r.met)
      ? ` (not met: ${judged
          .filter((r) => !r.met)
          .map((r) => r.what)
          .join('; ')})`
      : ''),
);
