// Section (c): peak resident memory of a fresh process opening a 1 GiB package with
// openPackageStream from fs.createReadStream, beside the same process doing a bare streaming
// read + SHA-256 of the same file.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { MiB, REPS, fmt, median, printTable, runChild } from './common.js';
import { buildChildren, removeChildren } from './compile.js';

/** Size of section (c)'s package: 1 GiB, or BENCH_BIG_MIB MiB for a quicker run. */
export const BIG_BYTES = Number(process.env.BENCH_BIG_MIB ?? 1024) * MiB;
const TARGET_MIB = 100;

interface ChildReport {
  readonly mode: 'open' | 'hash';
  readonly fileBytes: number;
  readonly bytes: number;
  readonly ms: number;
  readonly rssStart: number;
  readonly rssPeak: number;
  readonly heapTotalAtPeak: number;
  readonly arrayBuffersAtPeak: number;
  readonly maxRssKiB: number;
  readonly vmHwmKiB: number;
  readonly rssAnonKiB: number;
  readonly rssFileKiB: number;
}

interface MakeReport {
  readonly createMs: number;
  readonly totalMs: number;
  readonly packageBytes: number;
  readonly vmHwmKiB: number;
}

export interface MemoryResult {
  /** Peak RSS of the opening process, MiB (max of the 10 ms samples and VmHWM). */
  readonly openPeakMiB: number;
  readonly hashPeakMiB: number;
  readonly openStartMiB: number;
  readonly openMiBps: number;
  readonly hashMiBps: number;
  readonly make: MakeReport;
}

// VmHWM when /proc is there; else getrusage maxRSS, which on Linux can include memory of the
// spawning parent (it survives fork + exec), so it is only a fallback.
const peakMiB = (r: ChildReport): number =>
  Math.max(r.rssPeak / MiB, Number.isFinite(r.vmHwmKiB) ? r.vmHwmKiB / 1024 : r.maxRssKiB / 1024);

export function benchMemory(dir: string, seedHex: string): MemoryResult {
  const env = { BENCH_SEED: seedHex };
  const file = join(dir, 'big.oapp');
  const js = buildChildren();
  try {
    const make = runChild<MakeReport>(join(js, 'make-child.js'), [file, String(BIG_BYTES)], env);
    console.log(
      `created a ${fmt(make.packageBytes / MiB)} MiB package once in a child process: createPackage ` +
        `${fmt(make.createMs, 0)} ms (${fmt(BIG_BYTES / MiB / (make.createMs / 1000), 0)} MiB/s), ` +
        `with write ${fmt(make.totalMs, 0)} ms; that process peaked at ${fmt(make.vmHwmKiB / 1024, 0)} MiB RSS`,
    );
    const open: ChildReport[] = [];
    const hash: ChildReport[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const order = rep % 2 === 0 ? (['open', 'hash'] as const) : (['hash', 'open'] as const);
      for (const mode of order) {
        const r = runChild<ChildReport>(join(js, 'open-child.js'), [mode, file], env);
        if (r.bytes !== (mode === 'open' ? BIG_BYTES : r.fileBytes))
          throw new Error(`${mode}: streamed ${r.bytes} bytes`);
        (mode === 'open' ? open : hash).push(r);
      }
    }
    const res: MemoryResult = {
      openPeakMiB: median(open.map(peakMiB)),
      hashPeakMiB: median(hash.map(peakMiB)),
      openStartMiB: median(open.map((r) => r.rssStart / MiB)),
      openMiBps: median(open.map((r) => r.bytes / MiB / (r.ms / 1000))),
      hashMiBps: median(hash.map((r) => r.fileBytes / MiB / (r.ms / 1000))),
      make,
    };
    const hashStart = median(hash.map((r) => r.rssStart / MiB));
    printTable(
      [
        `fresh node process, ${BIG_BYTES / MiB} MiB file (median of ${REPS})`,
        'peak RSS MiB',
        'RSS at start MiB',
        'MiB/s',
      ],
      [
        [
          'openPackageStream -> /dev/null',
          fmt(res.openPeakMiB),
          fmt(res.openStartMiB),
          fmt(res.openMiBps, 0),
        ],
        ['baseline: createReadStream + SHA-256', fmt(res.hashPeakMiB), fmt(hashStart), fmt(res.hashMiBps, 0)],
      ],
    );
    console.log(
      `peak RSS ratio ours/bare read: ${fmt(res.openPeakMiB / res.hashPeakMiB, 2)}; ` +
        `throughput ratio ours/bare read: ${fmt(res.openMiBps / res.hashMiBps, 2)}; ` +
        `target peak < ${TARGET_MIB} MiB: ${res.openPeakMiB < TARGET_MIB ? 'met' : 'NOT met'}`,
    );
    const at = (rs: ChildReport[], k: 'heapTotalAtPeak' | 'arrayBuffersAtPeak'): string =>
      fmt(median(rs.map((r) => r[k] / MiB)));
    console.log(
      `at the peak sample: V8 heap ${at(open, 'heapTotalAtPeak')} MiB + ArrayBuffers ` +
        `${at(open, 'arrayBuffersAtPeak')} MiB (ours) vs ${at(hash, 'heapTotalAtPeak')} + ` +
        `${at(hash, 'arrayBuffersAtPeak')} MiB (bare read)`,
    );
    const split = (rs: ChildReport[]): string =>
      `${fmt(median(rs.map((r) => r.rssAnonKiB / 1024)))} anonymous + ` +
      `${fmt(median(rs.map((r) => r.rssFileKiB / 1024)))} file-backed (the node binary and libraries)`;
    console.log(`resident at exit, MiB: ours ${split(open)}; bare read ${split(hash)}`);
    console.log(
      `peak RSS samples (MiB): open ${open.map((r) => fmt(peakMiB(r), 0)).join(' ')} | ` +
        `bare ${hash.map((r) => fmt(peakMiB(r), 0)).join(' ')}; getrusage maxRSS, not used (it includes ` +
        `memory of the spawning parent, carried over fork + exec): ` +
        `${open.map((r) => fmt(r.maxRssKiB / 1024, 0)).join(' ')}`,
    );
    return res;
  } finally {
    rmSync(file, { force: true });
    removeChildren();
  }
}
