// Streaming writer and streamed open of a 1 GiB file: time and peak resident memory, beside Debian's
// `age` (10 recipients) + `minisign` (3 signatures) doing the same work in the same run. A benchmark,
// never a test. Run: pnpm --filter @org/oapp-format bench:stream   (BENCH_REPS, default 3; BENCH_MIB, default 1024)
// Every operation of ours runs in a fresh `node` process (plain JavaScript, compile.ts), timed from the
// parent around the whole process like the external tools, so start-up is counted on both sides.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MiB, fmt, median, printTable, runChild } from './common.js';
import { buildChildren, removeChildren } from './compile.js';
import { writeRandomFile } from './files.js';
import { missingTools } from './vs-age.js';

const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? '3') || 3);
const BYTES = Math.max(1, Number(process.env.BENCH_MIB ?? '1024') || 1024) * MiB;
const RSS_TARGET_MIB = 128;
const TIME_TARGET = 1.0;

interface ChildReport {
  readonly mode: string;
  readonly ms: number;
  readonly rssPeakMiB: number;
  readonly vmHwmMiB: number;
  readonly maxRssMiB: number;
}
interface Sample extends ChildReport {
  readonly wallMs: number;
}

function run(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

function timed(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path) as AsyncIterable<Buffer>) h.update(c);
  return h.digest('hex');
}

const seedHex = randomBytes(32).toString('hex');
const dir = mkdtempSync(join(tmpdir(), 'oapp-stream-bench-'));
const f = (name: string): string => join(dir, name);
console.log(`@org/oapp-format streaming bench, ${new Date().toISOString()}`);
console.log(
  `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ` +
    `${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; ${fmt(BYTES / MiB, 0)} MiB file; median of ${REPS}; temp dir ${dir}`,
);
const missing = missingTools();
const js = buildChildren();
try {
  writeRandomFile(f('in.bin'), BYTES);
  const inputHash = await sha256File(f('in.bin'));
  const child = (mode: string, input: string, output: string): Sample => {
    const t0 = performance.now();
    const r = runChild<ChildReport>(join(js, 'stream-child.js'), [mode, input, output], {
      BENCH_SEED: seedHex,
    });
    return { ...r, wallMs: performance.now() - t0 };
  };

  const ageRecipients: string[] = [];
  if (missing === null) {
    for (let i = 1; i <= 10; i++) {
      run('age-keygen', ['-o', f(`id${i}.txt`)]);
      ageRecipients.push(run('age-keygen', ['-y', f(`id${i}.txt`)]).trim());
    }
    for (let i = 1; i <= 3; i++) run('minisign', ['-G', '-W', '-p', f(`ms${i}.pub`), '-s', f(`ms${i}.key`)]);
  } else {
    console.log(
      `age/minisign baseline skipped: ${missing.join(', ')} not found (apt-get install -y age minisign)`,
    );
  }
  const baseCreate = (): void => {
    run('age', [...ageRecipients.flatMap((r) => ['-r', r]), '-o', f('out.age'), f('in.bin')]);
    for (let i = 1; i <= 3; i++)
      run('minisign', ['-S', '-s', f(`ms${i}.key`), '-x', f(`out.age.${i}.minisig`), '-m', f('out.age')]);
  };
  const baseOpen = (): void => {
    for (let i = 1; i <= 3; i++)
      run('minisign', [
        '-V',
        '-q',
        '-p',
        f(`ms${i}.pub`),
        '-x',
        f(`out.age.${i}.minisig`),
        '-m',
        f('out.age'),
      ]);
    run('age', ['-d', '-i', f('id1.txt'), '-o', f('dec.age.bin'), f('out.age')]);
  };

  const s: Record<'write' | 'stream' | 'open' | 'copy', Sample[]> = {
    write: [],
    stream: [],
    open: [],
    copy: [],
  };
  const base = { create: [] as number[], open: [] as number[] };
  for (let rep = 0; rep < REPS; rep++) {
    const oursFirst = rep % 2 === 0;
    if (!oursFirst && missing === null) base.create.push(timed(baseCreate));
    s.write.push(child('write', f('in.bin'), f('out.oapp')));
    s.stream.push(child('stream', f('in.bin'), f('out2.oapp')));
    if (oursFirst && missing === null) base.create.push(timed(baseCreate));
    if (!oursFirst && missing === null) base.open.push(timed(baseOpen));
    s.open.push(child('open', f('out.oapp'), f('dec.oapp.bin')));
    if (oursFirst && missing === null) base.open.push(timed(baseOpen));
    s.copy.push(child('copy', f('in.bin'), f('copy.bin')));
    if (rep === 0) {
      const outs = ['dec.oapp.bin', 'copy.bin', ...(missing === null ? ['dec.age.bin'] : [])];
      for (const o of outs)
        if ((await sha256File(f(o))) !== inputHash) throw new Error(`${o} differs from the input`);
      if (statSync(f('out.oapp')).size !== statSync(f('out2.oapp')).size)
        throw new Error('the one-pass and two-pass packages differ in length');
    }
  }

  const m = (xs: readonly Sample[], k: keyof Sample): number => median(xs.map((x) => Number(x[k])));
  const peak = (xs: readonly Sample[]): number => median(xs.map((x) => Math.max(x.vmHwmMiB, x.rssPeakMiB)));
  const mibps = (xs: readonly Sample[]): number => BYTES / MiB / (m(xs, 'wallMs') / 1000);
  const bc = missing === null ? median(base.create) : NaN;
  const bo = missing === null ? median(base.open) : NaN;
  const bare = m(s.copy, 'wallMs');
  const row = (name: string, xs: Sample[], baseMs: number): string[] => [
    name,
    fmt(m(xs, 'wallMs'), 0),
    fmt(mibps(xs), 0),
    Number.isNaN(baseMs) ? '-' : fmt(m(xs, 'wallMs') / baseMs, 2),
    fmt(m(xs, 'wallMs') / bare, 2),
    fmt(peak(xs)),
    fmt(m(xs, 'maxRssMiB')),
  ];
  console.log('');
  printTable(
    [
      'operation (fresh process each)',
      'ms',
      'MiB/s',
      'ours/(age+minisign)',
      'ours/bare copy',
      'peak RSS MiB',
      'maxRSS MiB',
    ],
    [
      row('create, writePackage (one pass)', s.write, bc),
      row('create, createPackageStream (two passes)', s.stream, bc),
      row('verify 3 + open, openPackageToSink', s.open, bo),
      row('bare copy: read + SHA-256 + write', s.copy, NaN),
    ],
  );
  if (missing === null)
    console.log(
      `baseline: create = age -e (10 x -r) + 3 x minisign -S on the result, ${fmt(bc, 0)} ms; ` +
        `open = 3 x minisign -V + age -d, ${fmt(bo, 0)} ms (each includes process start-up)`,
    );
  console.log(
    'peak RSS = max(10 ms samples, VmHWM); maxRSS = process.resourceUsage().maxRSS, printed for reference ' +
      '(Linux carries it over fork + exec from the spawning parent)',
  );
  const all = (xs: Sample[]): string => xs.map((x) => fmt(x.wallMs, 0)).join(' ');
  console.log(
    `samples (ms): write ${all(s.write)} | stream ${all(s.stream)} | open ${all(s.open)} | copy ${all(s.copy)}` +
      (missing === null
        ? ` | base create ${base.create.map((x) => fmt(x, 0)).join(' ')} | base open ${base.open.map((x) => fmt(x, 0)).join(' ')}`
        : ''),
  );
  const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  console.log('\n== summary ==');
  for (const [name, xs, b] of [
    ['create (writePackage)', s.write, bc],
    ['create (createPackageStream)', s.stream, bc],
    ['verify + open (openPackageToSink)', s.open, bo],
  ] as const) {
    const ratio = m(xs, 'wallMs') / b;
    console.log(
      `- ${fmt(BYTES / MiB, 0)} MiB ${name}: ` +
        (Number.isNaN(ratio)
          ? 'no age/minisign baseline'
          : `time ours/(age+minisign) = ${fmt(ratio, 2)}, target <= ${TIME_TARGET} ${verdict(ratio <= TIME_TARGET)}`) +
        `; peak RSS ${fmt(peak(xs))} MiB, target < ${RSS_TARGET_MIB} ${verdict(peak(xs) < RSS_TARGET_MIB)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  removeChildren();
}
