import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary data directory; `cleanup()` removes it. */
export function tempDataDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'wf-persist-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export const KEY_A = 'a1'.repeat(32);
export const KEY_B = 'b2'.repeat(32);
