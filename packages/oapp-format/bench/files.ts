// File helpers of the benchmarks.
import { randomFillSync } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';

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
