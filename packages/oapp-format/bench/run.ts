// Benchmarks of @org/oapp-format. Run: pnpm --filter @org/oapp-format bench (never part of CI).
// Every figure is a ratio against a baseline measured in the same run (see bench/README.md).
// BENCH_REPS (default 5) sets the repetitions; BENCH_SECTIONS=abc picks the sections.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MiB, REPS, benchKeys, fmt } from './common.js';
import { BIG_BYTES, benchMemory, type MemoryResult } from './memory.js';
import { benchThroughput, type ThroughputRow } from './throughput.js';
import { benchVsAge, missingTools, type VsAgeResult } from './vs-age.js';

const sections = process.env.BENCH_SECTIONS ?? 'abc';
const seedHex = randomBytes(32).toString('hex');
const keys = benchKeys(seedHex);
const dir = mkdtempSync(join(tmpdir(), 'oapp-bench-'));

console.log(`@org/oapp-format bench, ${new Date().toISOString()}`);
console.log(
  `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ` +
    `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; median of ${REPS} repetitions everywhere; temp dir ${dir}`,
);

/** The machine's load average (1, 5, 15 min) now: the machine is shared, and ratios are read with it. */
function printLoad(when: string): void {
  console.log(
    `load average ${when}: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
}

let vsAge: VsAgeResult | 'skipped' | undefined;
let throughput: ThroughputRow[] | undefined;
let memory: MemoryResult | undefined;
try {
  if (sections.includes('a')) {
    console.log('\n== (a) 64 MiB file: oapp vs age + minisign (10 recipients, 3 signers) ==');
    const missing = missingTools();
    if (missing !== null) {
      console.log(
        `skipped: ${missing.join(', ')} not found; install them with: apt-get install -y age minisign`,
      );
      vsAge = 'skipped';
    } else {
      vsAge = await benchVsAge(dir, keys);
    }
    printLoad('after (a)');
  }
  if (sections.includes('b')) {
    console.log('\n== (b) throughput, ops/s, beside libsodium-wrappers-sumo (wasm) ==');
    throughput = await benchThroughput(keys);
    printLoad('after (b)');
  }
  if (sections.includes('c')) {
    console.log(
      `\n== (c) peak resident memory opening a ${BIG_BYTES / MiB} MiB package (fresh child process) ==`,
    );
    memory = benchMemory(dir, seedHex);
    printLoad('after (c)');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
console.log('\n== summary ==');
console.log(
  `oapp-format bench (${new Date().toISOString().slice(0, 10)}, node ${process.version}, ` +
    `${cpus().length} shared cores, median of ${REPS}; ratios against same-run baselines)`,
);
if (vsAge === 'skipped') console.log('- 64 MiB vs age+minisign: skipped (age/minisign not installed)');
else if (vsAge !== undefined) {
  const c = vsAge.createOurs / vsAge.createBase;
  const o = vsAge.openStream / vsAge.openBase;
  console.log(
    `- 64 MiB, 10 recipients, 3 signers, create: ours/(age+minisign) = ${fmt(c, 2)} ` +
      `(${fmt(vsAge.createOurs, 0)} vs ${fmt(vsAge.createBase, 0)} ms), target <= 1.5 ${verdict(c <= 1.5)}`,
  );
  console.log(
    `- 64 MiB verify 3 + open (streamed to a file): ours/(minisign+age) = ${fmt(o, 2)} ` +
      `(${fmt(vsAge.openStream, 0)} vs ${fmt(vsAge.openBase, 0)} ms), target <= 1.5 ${verdict(o <= 1.5)}; ` +
      `buffered openPackage ${fmt(vsAge.openBuffered / vsAge.openBase, 2)}`,
  );
}
for (const r of throughput ?? []) {
  console.log(`- ${r.name}: ${fmt(r.ours, 0)} ops/s, ${fmt(r.ours / r.base, 2)}x libsodium (${r.baseName})`);
}
if (memory !== undefined) {
  console.log(
    `- open ${BIG_BYTES / MiB} MiB package streamed: peak RSS ${fmt(memory.openPeakMiB)} MiB ` +
      `(${fmt(memory.openPeakMiB / memory.hashPeakMiB, 2)}x a bare createReadStream+SHA-256 at ` +
      `${fmt(memory.hashPeakMiB)} MiB), target < 100 MiB ${verdict(memory.openPeakMiB < 100)}; ` +
      `${fmt(memory.openMiBps, 0)} MiB/s = ${fmt(memory.openMiBps / memory.hashMiBps, 2)}x the bare read`,
  );
}
