// Shared by the command-line benchmarks: run a whole process and measure its wall time and peak resident memory.
// Peak RSS is the child's own "Maximum resident set size" from GNU time (`/usr/bin/time -v`, apt-get install -y
// time); without it, /proc/<pid>/status VmRSS sampled every 10 ms.
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { closeSync, createReadStream, existsSync, openSync, readFileSync, writeSync } from 'node:fs';

export const MiB = 1024 * 1024;
const GNU_TIME = '/usr/bin/time';
export const hasGnuTime =
  existsSync(GNU_TIME) && spawnSync(GNU_TIME, ['-v', 'true'], { stdio: 'ignore' }).status === 0;

/** One measured process (or a sequence of them: times add up, the peak is the largest). */
export interface Measure {
  readonly ms: number;
  readonly peakMiB: number;
  /** User + system CPU time from GNU time (NaN without it): steadier than wall time on a shared machine. */
  readonly cpuMs: number;
}

export type Step = readonly [string, readonly string[]];

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const fmt = (n: number, digits = 1): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function vmRssKiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Runs `cmd args` to completion; wall time from here, peak RSS from GNU time or 10 ms VmRSS samples. */
export function measure(cmd: string, args: readonly string[], cwd?: string): Promise<Measure> {
  return new Promise((resolve, reject) => {
    const argv = hasGnuTime ? ['-v', cmd, ...args] : [...args];
    const t0 = performance.now();
    const child = spawn(hasGnuTime ? GNU_TIME : cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'], cwd });
    let stderr = '';
    let sampledKiB = 0;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = hasGnuTime
      ? undefined
      : setInterval(() => {
          if (child.pid !== undefined) sampledKiB = Math.max(sampledKiB, vmRssKiB(child.pid));
        }, 10);
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (timer !== undefined) clearInterval(timer);
      if (code !== 0)
        return reject(new Error(`${cmd} ${args.join(' ')} failed (${code}): ${stderr.slice(-2000)}`));
      const kib = hasGnuTime
        ? Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? NaN)
        : sampledKiB;
      const seconds = (name: string) =>
        Number(new RegExp(`${name} time \\(seconds\\): ([0-9.]+)`).exec(stderr)?.[1] ?? NaN);
      resolve({
        ms,
        peakMiB: kib / 1024,
        cpuMs: hasGnuTime ? (seconds('User') + seconds('System')) * 1000 : NaN,
      });
    });
  });
}

/** Runs the steps one after another: times add up, the peak is the largest. */
export async function sequence(steps: readonly Step[], cwd?: string): Promise<Measure> {
  let ms = 0;
  let peakMiB = 0;
  let cpuMs = 0;
  for (const [cmd, args] of steps) {
    const m = await measure(cmd, args, cwd);
    ms += m.ms;
    peakMiB = Math.max(peakMiB, m.peakMiB);
    cpuMs += m.cpuMs;
  }
  return { ms, peakMiB, cpuMs };
}

/** Runs a command for its output; throws with its stderr when it fails. */
export function run(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

export function writeRandomFile(path: string, bytes: number): void {
  const block = new Uint8Array(Math.min(bytes, 8 * MiB));
  const fd = openSync(path, 'w');
  try {
    for (let left = bytes; left > 0; left -= block.length) {
      randomFillSync(block);
      writeSync(fd, block, 0, Math.min(left, block.length));
    }
  } finally {
    closeSync(fd);
  }
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path) as AsyncIterable<Buffer>) h.update(c);
  return h.digest('hex');
}

/** Which of the baseline tools are not on PATH. */
export function missingTools(tools: readonly string[]): string[] {
  return tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' }).status !== 0);
}
