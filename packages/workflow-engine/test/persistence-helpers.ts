import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import {
  createLmdbPersistence,
  type PersistenceLimits,
  type PersistenceProvider,
  type PersistenceSpec,
} from '../src/index.js';

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

/** A plain store's spec (no key, no obfuscation, flushed) for `file`. */
export const plainSpec = (file: string): PersistenceSpec => ({
  file,
  flush: true,
  hexSymmetricKey: undefined,
  obfuscate: false,
});

/** A fresh data directory per test and the LMDB providers a test opens on it, closed after the test. */
export class StoreHarness {
  dir = '';
  private cleanup: () => void = () => undefined;
  private readonly providers: PersistenceProvider[] = [];

  /** Registers the hooks of the calling test file: a new directory before each test, closed and removed after. */
  static perTest(): StoreHarness {
    const h = new StoreHarness();
    beforeEach(() => {
      ({ dir: h.dir, cleanup: h.cleanup } = tempDataDir());
    });
    afterEach(async () => {
      await h.closeAll();
      h.cleanup();
    });
    return h;
  }

  /** A provider on the test's directory (closed with {@link closeAll}). */
  provider(limits: Partial<PersistenceLimits> = {}): PersistenceProvider {
    const p = createLmdbPersistence({ dataDir: this.dir, limits });
    this.providers.push(p);
    return p;
  }

  /** Closes every provider opened so far: the next {@link provider} is a restart on the same directory. */
  async closeAll(): Promise<void> {
    for (const p of this.providers.splice(0)) await p.close();
  }
}
