// Issue 27 §1: a store the system will not open or create is ENGINE_PERSISTENCE_UNAVAILABLE, naming the path and
// the errno; "corrupt" is kept for files that are not a store.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLmdbPersistence, EngineError } from '../src/index.js';
import { plainSpec as spec, StoreHarness } from './persistence-helpers.js';

const h = StoreHarness.perTest();

async function openError(dataDir: string, file: string): Promise<EngineError> {
  const p = createLmdbPersistence({ dataDir });
  try {
    const err: unknown = await p.open('s', spec(file)).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof EngineError)) throw new Error(`expected an EngineError, got ${String(err)}`);
    return err;
  } finally {
    await p.close();
  }
}

describe('S166 a store the system refuses (ENGINE_PERSISTENCE_UNAVAILABLE)', () => {
  it('names the path and ENAMETOOLONG for a file name over the system limit, and for a directory on the way', async () => {
    const long = 'x'.repeat(300);
    for (const file of [`${long}.store`, `sub/${long}/a.store`]) {
      const err = await openError(h.dir, file);
      expect(err.code).toBe('ENGINE_PERSISTENCE_UNAVAILABLE');
      expect(err.message).toContain('ENAMETOOLONG (a name in the path is too long)');
      expect(err.message).toContain(JSON.stringify(h.dir).slice(0, -1)); // the data directory's path, quoted
      expect(err.message).toContain('step "s"');
    }
  });

  it('names EROFS for a data directory on a read-only file system (root mounts one; skipped elsewhere)', async () => {
    const ro = mkdtempSync(join(tmpdir(), 'ro-'));
    try {
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', ro], { stdio: 'ignore' });
      } catch {
        if (process.env.CI) throw new Error('CI must be able to mount a tmpfs (run as root)');
        return;
      }
      try {
        const err = await openError(ro, 'a.store');
        expect(err.code).toBe('ENGINE_PERSISTENCE_UNAVAILABLE');
        expect(err.message).toBe(
          `step "s": the persistence file ${JSON.stringify(join(ro, 'a.store'))} cannot be opened or created: EROFS (read-only file system)`,
        );
      } finally {
        execFileSync('umount', [ro], { stdio: 'ignore' });
      }
    } finally {
      rmSync(ro, { recursive: true, force: true });
    }
  });
});
