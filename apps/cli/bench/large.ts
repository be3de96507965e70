// `oapp package --raw` and `oapp open` of a 1 GiB file, each a fresh `node dist/main.js` process, beside
// Debian's `age` (10 recipients) + `minisign` (3 signatures) doing the same work in the same run: wall time
// and peak resident memory of the child processes. A benchmark, never a test.
// Run (after `pnpm -s build`): pnpm --filter @org/cli bench   (BENCH_REPS, default 3; BENCH_MIB, default 1024)
// Peak RSS as bench/measure.ts takes it. Temporary files are removed at the end.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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
} from './measure.js';

const REPS = Math.max(1, Number(process.env['BENCH_REPS'] ?? '3') || 3);
const BYTES = Math.max(1, Number(process.env['BENCH_MIB'] ?? '1024') || 1024) * MiB;
const RSS_TARGET_MIB = 128;
const TIME_TARGET = 1.0;
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

const missing = missingTools(['age', 'age-keygen', 'minisign']);
if (!existsSync(MAIN)) {
  console.error(`${MAIN} not found: run pnpm -s build first`);
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'oapp-cli-bench-'));
const f = (name: string): string => join(dir, name);
const oapp = (...args: string[]): readonly [string, readonly string[]] => [process.execPath, [MAIN, ...args]];

console.log(`oapp command line, 1 GiB bench, ${new Date().toISOString()}`);
console.log(
  `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ` +
    `${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; ${fmt(BYTES / MiB, 0)} MiB file; median of ${REPS}; ` +
    `peak RSS from ${hasGnuTime ? 'GNU time -v' : '10 ms VmRSS samples'}`,
);
try {
  writeRandomFile(f('in.bin'), BYTES);
  const inputHash = await sha256File(f('in.bin'));

  // Ours: 10 recipients, 3 signers; open verifies all three (1 required + 2 additional, threshold 2).
  const ok = (r: ReturnType<typeof spawnSync>) => {
    if (r.status !== 0) throw new Error(`oapp keygen failed: ${String(r.stderr)}`);
  };
  ok(spawnSync(process.execPath, [MAIN, 'keygen', '--purpose', 'authenticated', '-o', f('packager.key')]));
  for (let i = 1; i <= 10; i++)
    ok(spawnSync(process.execPath, [MAIN, 'keygen', '--purpose', 'authenticated', '-o', f(`dep${i}.key`)]));
  for (let i = 1; i <= 3; i++)
    ok(spawnSync(process.execPath, [MAIN, 'keygen', '--purpose', 'sign', '-o', f(`signer${i}.key`)]));
  const seal = [
    '--package-id',
    'bench-app',
    '--packager-key',
    f('packager.key'),
    ...Array.from({ length: 10 }, (_, i) => ['--recipient', f(`dep${i + 1}.pub`)]).flat(),
    ...Array.from({ length: 3 }, (_, i) => ['--signer', f(`signer${i + 1}.key`)]).flat(),
    '--sign-text',
    'bench release',
  ];
  const policy = [
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
  const oursPackage = () => sequence([oapp('package', '--raw', f('in.bin'), '-o', f('out.oapp'), ...seal)]);
  const oursOpen = () => sequence([oapp('open', f('out.oapp'), '-o', f('dec.oapp.bin'), ...policy)]);

  const ageRecipients: string[] = [];
  if (missing.length === 0) {
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
  const baseCreate = () =>
    sequence([
      ['age', [...ageRecipients.flatMap((r) => ['-r', r]), '-o', f('out.age'), f('in.bin')]],
      ...[1, 2, 3].map(
        (i) =>
          [
            'minisign',
            ['-S', '-s', f(`ms${i}.key`), '-x', f(`out.age.${i}.minisig`), '-m', f('out.age')],
          ] as const,
      ),
    ]);
  const baseOpen = () =>
    sequence([
      ...[1, 2, 3].map(
        (i) =>
          [
            'minisign',
            ['-V', '-q', '-p', f(`ms${i}.pub`), '-x', f(`out.age.${i}.minisig`), '-m', f('out.age')],
          ] as const,
      ),
      ['age', ['-d', '-i', f('id1.txt'), '-o', f('dec.age.bin'), f('out.age')]],
    ]);

  const ours = { package: [] as Measure[], open: [] as Measure[] };
  const base = { package: [] as Measure[], open: [] as Measure[] };
  const withBase = missing.length === 0;
  for (let rep = 0; rep < REPS; rep++) {
    // Alternate which side goes first so a warming page cache favours neither.
    const oursFirst = rep % 2 === 0;
    if (!oursFirst && withBase) base.package.push(await baseCreate());
    ours.package.push(await oursPackage());
    if (oursFirst && withBase) base.package.push(await baseCreate());
    if (!oursFirst && withBase) base.open.push(await baseOpen());
    ours.open.push(await oursOpen());
    if (oursFirst && withBase) base.open.push(await baseOpen());
    if (rep === 0) {
      const outs = ['dec.oapp.bin', ...(withBase ? ['dec.age.bin'] : [])];
      for (const o of outs)
        if ((await sha256File(f(o))) !== inputHash) throw new Error(`${o} differs from the input`);
    }
  }

  const ms = (xs: readonly Measure[]) => median(xs.map((x) => x.ms));
  const peak = (xs: readonly Measure[]) => median(xs.map((x) => x.peakMiB));
  const verdict = (okay: boolean) => (okay ? 'met' : 'NOT met');
  console.log('');
  for (const name of ['package', 'open'] as const) {
    const o = ours[name];
    const b = base[name];
    const tRatio = withBase ? ms(o) / ms(b) : NaN;
    const rRatio = withBase ? peak(o) / peak(b) : NaN;
    console.log(
      `${name}: oapp ${fmt(ms(o), 0)} ms, peak RSS ${fmt(peak(o))} MiB` +
        (withBase ? ` | age+minisign ${fmt(ms(b), 0)} ms, peak RSS ${fmt(peak(b))} MiB` : ''),
    );
    console.log(
      `  samples (ms): oapp ${o.map((x) => fmt(x.ms, 0)).join(' ')}` +
        (withBase ? ` | age+minisign ${b.map((x) => fmt(x.ms, 0)).join(' ')}` : ''),
    );
    console.log(
      `  time oapp/(age+minisign) = ${withBase ? fmt(tRatio, 2) : '-'} (target <= ${TIME_TARGET}: ` +
        `${withBase ? verdict(tRatio <= TIME_TARGET) : 'no baseline'}); peak RSS ${fmt(peak(o))} MiB ` +
        `(target < ${RSS_TARGET_MIB}: ${verdict(peak(o) < RSS_TARGET_MIB)}), RSS oapp/(age+minisign) = ` +
        `${withBase ? fmt(rRatio, 2) : '-'}`,
    );
  }
  console.log(
    'baseline: package = age -e (10 x -r) + 3 x minisign -S; open = 3 x minisign -V + age -d ' +
      '(times summed, peak = the largest process); oapp: 10 recipients, 3 signers, open verifies all 3. ' +
      'Every process is timed whole, start-up included.',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
