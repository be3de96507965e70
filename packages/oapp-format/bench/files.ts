// File helpers of the benchmarks.
import { randomFillSync } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/** Writes `bytes` random bytes to `path`, 8 MiB at a time. */
export function writeRandomFile(path: string, bytes: number): void {
  const block = new Uint8Array(Math.min(bytes, 8 * 1024 * 1024));
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

/**
 * A `kB` field of /proc/self/status (Linux), in KiB; NaN elsewhere. `VmHWM` is the peak resident
 * set of this process image. Prefer it to `process.resourceUsage().maxRSS`: Linux carries
 * `maxRSS` over fork + exec, so a child can report memory its parent had when spawning it.
 */
export function procStatusKiB(field: string): number {
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return NaN;
  }
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
}
