import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BOOTSTRAP_RELEASE_FILE,
  releaseFileOf,
  releaseStore,
  RELEASES_DIR,
} from '../src/startup/release-store.js';
import { tempDir } from './fixtures.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);

function failure(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not throw');
}

describe('releaseStore (ADR 0144)', () => {
  it('remembers the newest release per package id across store instances, in one file each', () => {
    const dataDir = join(tempDir(), 'not-yet-created', 'data');
    const first = releaseStore(dataDir);
    expect(first.newest('echo-app')).toBeUndefined();
    first.remember('echo-app', { sequence: 7, contentSha256: SHA_A }, 'dep-1');
    first.remember('other/app', { sequence: 1, contentSha256: SHA_B }, 'dep-2');
    const again = releaseStore(dataDir);
    expect(again.newest('echo-app')).toEqual({ sequence: 7, contentSha256: SHA_A });
    expect(again.newest('other/app')).toEqual({ sequence: 1, contentSha256: SHA_B });
    again.remember('echo-app', { sequence: 5, contentSha256: SHA_B }, 'dep-1');
    expect(releaseStore(dataDir).newest('echo-app')).toEqual({ sequence: 5, contentSha256: SHA_B });
    // One file per package id, named by a hash (no id becomes a path), no temporary file left behind.
    const dir = join(dataDir, RELEASES_DIR);
    expect(readdirSync(dir).sort()).toEqual(
      [releaseFileOf(dir, 'echo-app'), releaseFileOf(dir, 'other/app')]
        .map((p) => p.slice(dir.length + 1))
        .sort(),
    );
    const record = JSON.parse(readFileSync(releaseFileOf(dir, 'echo-app'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(record).toMatchObject({
      packageId: 'echo-app',
      sequence: 5,
      contentSha256: SHA_B,
      deploymentId: 'dep-1',
    });
  });

  it('without a data directory remembers nothing and reads nothing', () => {
    const store = releaseStore(undefined);
    expect(store.dir).toBeUndefined();
    store.remember('echo-app', { sequence: 7, contentSha256: SHA_A }, 'dep-1');
    expect(store.newest('echo-app')).toBeUndefined();
  });

  it('refuses a file that is not its record with AGENT_RELEASE_STATE_UNREADABLE instead of forgetting it', () => {
    const dataDir = tempDir();
    const dir = join(dataDir, RELEASES_DIR);
    mkdirSync(dir);
    const path = releaseFileOf(dir, 'echo-app');
    for (const text of [
      '',
      '{"packageId":"echo-app","sequence":7}',
      `{"packageId":"other","sequence":7,"contentSha256":"${SHA_A}"}`,
      `{"packageId":"echo-app","sequence":-1,"contentSha256":"${SHA_A}"}`,
      `{"packageId":"echo-app","sequence":7,"contentSha256":"${SHA_A}","sequence":8}`,
    ]) {
      writeFileSync(path, text);
      const e = failure(() => releaseStore(dataDir).newest('echo-app'));
      expect(e.code).toBe('AGENT_RELEASE_STATE_UNREADABLE');
      expect(e.message).toContain('"echo-app"');
      expect(e.message).toContain(path);
    }
  });

  it('refuses to go on when the state cannot be written, naming the file (AGENT_RELEASE_STATE_UNWRITABLE)', () => {
    const root = tempDir();
    // A data directory that is a file: nothing can be created under it, whoever runs the test.
    const dataDir = join(root, 'data-is-a-file');
    writeFileSync(dataDir, '');
    const store = releaseStore(dataDir);
    expect(store.newest('echo-app')).toBeUndefined();
    const e = failure(() => store.remember('echo-app', { sequence: 7, contentSha256: SHA_A }, 'dep-1'));
    expect(e.code).toBe('AGENT_RELEASE_STATE_UNWRITABLE');
    expect(e.message).toContain('deployment "dep-1"');
    expect(e.message).toContain('(ENOTDIR)');
    if (process.getuid?.() !== 0) {
      const ro = join(root, 'read-only');
      mkdirSync(ro, { mode: 0o500 });
      chmodSync(ro, 0o500);
      const e2 = failure(() =>
        releaseStore(ro).remember('x', { sequence: 1, contentSha256: SHA_A }, 'dep-2'),
      );
      expect(e2.code).toBe('AGENT_RELEASE_STATE_UNWRITABLE');
      expect(e2.message).toContain('(EACCES)');
    }
  });

  it('remembers the newest signed bootstrap under a reserved name no package id can take (ADR 0147)', () => {
    const dataDir = join(tempDir(), 'data');
    const store = releaseStore(dataDir);
    expect(store.newestBootstrap()).toBeUndefined();
    store.rememberBootstrap({ sequence: 9, contentSha256: SHA_A });
    // Package ids, "bootstrap" and "bootstrap.json" among them, have files of their own.
    for (const id of ['bootstrap', 'bootstrap.json', '../bootstrap'])
      store.remember(id, { sequence: 1, contentSha256: SHA_B }, 'dep-1');
    const dir = join(dataDir, RELEASES_DIR);
    for (const id of ['bootstrap', 'bootstrap.json', '../bootstrap'])
      expect(releaseFileOf(dir, id)).not.toBe(join(dir, BOOTSTRAP_RELEASE_FILE));
    expect(releaseStore(dataDir).newestBootstrap()).toEqual({ sequence: 9, contentSha256: SHA_A });
    expect(releaseStore(dataDir).newest('bootstrap')).toEqual({ sequence: 1, contentSha256: SHA_B });
    expect(JSON.parse(readFileSync(join(dir, BOOTSTRAP_RELEASE_FILE), 'utf8'))).toMatchObject({
      kind: 'bootstrap',
      sequence: 9,
      contentSha256: SHA_A,
    });
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // Without a data directory: nothing.
    releaseStore(undefined).rememberBootstrap({ sequence: 9, contentSha256: SHA_A });
    expect(releaseStore(undefined).newestBootstrap()).toBeUndefined();
  });

  it('refuses a bootstrap file that is not a bootstrap record, and an unwritable one, naming the file', () => {
    const dataDir = tempDir();
    const dir = join(dataDir, RELEASES_DIR);
    mkdirSync(dir);
    const path = join(dir, BOOTSTRAP_RELEASE_FILE);
    for (const text of [
      '{',
      `{"kind":"package","sequence":7,"contentSha256":"${SHA_A}"}`,
      // A package's record copied over it is not the bootstrap's.
      `{"packageId":"bootstrap","kind":"bootstrap","sequence":7,"contentSha256":"${SHA_A}"}`,
      `{"kind":"bootstrap","sequence":1.5,"contentSha256":"${SHA_A}"}`,
    ]) {
      writeFileSync(path, text);
      const e = failure(() => releaseStore(dataDir).newestBootstrap());
      expect(e.code).toBe('AGENT_RELEASE_STATE_UNREADABLE');
      expect(e.message).toContain('bootstrap release');
      expect(e.message).toContain(path);
    }
    // The bootstrap's record is no package's either.
    writeFileSync(
      releaseFileOf(dir, 'bootstrap'),
      `{"kind":"bootstrap","sequence":7,"contentSha256":"${SHA_A}"}`,
    );
    expect(failure(() => releaseStore(dataDir).newest('bootstrap')).code).toBe(
      'AGENT_RELEASE_STATE_UNREADABLE',
    );
    const file = join(dataDir, 'data-is-a-file');
    writeFileSync(file, '');
    const e = failure(() => releaseStore(file).rememberBootstrap({ sequence: 1, contentSha256: SHA_A }));
    expect(e.code).toBe('AGENT_RELEASE_STATE_UNWRITABLE');
    expect(e.message).toContain(join(file, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE));
    expect(e.message).toContain('(ENOTDIR)');
  });
});
