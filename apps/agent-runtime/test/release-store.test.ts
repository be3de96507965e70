import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BOOTSTRAP_RELEASE_FILE,
  LOCK_STALE_MS,
  RELEASE_LOCK_SUFFIX,
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

const WRITER = join(dirname(fileURLToPath(import.meta.url)), 'release-writer.ts');

/** Runs test/release-writer.ts in its own process; resolves with its exit code and output. */
function writer(
  dataDir: string,
  first: number,
  step: number,
  count: number,
  startAt: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ['--import', 'tsx', WRITER, dataDir, `${first}`, `${step}`, `${count}`, `${startAt}`],
      {
        cwd: dirname(WRITER),
      },
    );
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`writer exited ${code}: ${out}`))));
  });
}

describe('two agents on one data directory (issue 29)', () => {
  it('S169 a writer that read an older value cannot lower what another wrote meanwhile', () => {
    const dataDir = join(tempDir(), 'data');
    const a = releaseStore(dataDir);
    const b = releaseStore(dataDir);
    a.remember('echo-app', { sequence: 7, contentSha256: SHA_A }, 'dep-a');
    // Both starts check against 7; A accepts 10, B (an allowed downgrade to 5, or just slower) writes after it.
    expect(a.newest('echo-app')?.sequence).toBe(7);
    expect(b.newest('echo-app')?.sequence).toBe(7);
    a.remember('echo-app', { sequence: 10, contentSha256: SHA_A }, 'dep-a');
    b.remember('echo-app', { sequence: 5, contentSha256: SHA_B }, 'dep-b');
    expect(releaseStore(dataDir).newest('echo-app')).toEqual({ sequence: 10, contentSha256: SHA_A });
    // Nor the same sequence with other content, nor a value it never read (no basis: never lowered).
    b.remember('echo-app', { sequence: 10, contentSha256: SHA_B }, 'dep-b');
    releaseStore(dataDir).remember('echo-app', { sequence: 9, contentSha256: SHA_B }, 'dep-c');
    expect(releaseStore(dataDir).newest('echo-app')).toEqual({ sequence: 10, contentSha256: SHA_A });
    // The same holds for the bootstrap's release.
    const c = releaseStore(dataDir);
    const d = releaseStore(dataDir);
    expect(c.newestBootstrap()).toBeUndefined();
    expect(d.newestBootstrap()).toBeUndefined();
    c.rememberBootstrap({ sequence: 10, contentSha256: SHA_A });
    d.rememberBootstrap({ sequence: 5, contentSha256: SHA_B });
    expect(releaseStore(dataDir).newestBootstrap()).toEqual({ sequence: 10, contentSha256: SHA_A });
    // No lock file is left behind.
    expect(readdirSync(join(dataDir, RELEASES_DIR)).filter((f) => !f.endsWith('.json'))).toEqual([]);
  });

  it('S169 two writer processes racing on one data directory end with the highest sequence either wrote', async () => {
    const dataDir = join(tempDir(), 'data');
    // Interleaved series: 1, 3, 5, … 599 and 2, 4, … 600, each write after its own (soon stale) read.
    const startAt = Date.now() + 8_000;
    const outs = await Promise.all([
      writer(dataDir, 1, 2, 300, startAt),
      writer(dataDir, 2, 2, 300, startAt),
    ]);
    expect(outs).toEqual(['done\n', 'done\n']);
    expect(releaseStore(dataDir).newest('x')?.sequence).toBe(600);
  }, 60_000);

  it('S169 a lock left by a killed process is taken over, not waited for', () => {
    const dataDir = join(tempDir(), 'data');
    const dir = join(dataDir, RELEASES_DIR);
    mkdirSync(dir, { recursive: true });
    const lock = `${releaseFileOf(dir, 'echo-app')}${RELEASE_LOCK_SUFFIX}`;
    // A process that ran and is gone (as after kill -9 while it held the lock).
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    writeFileSync(
      lock,
      JSON.stringify({ pid: Number(gone.stdout.toString()), host: hostname(), token: 'x' }),
    );
    releaseStore(dataDir).remember('echo-app', { sequence: 3, contentSha256: SHA_A }, 'dep-1');
    expect(releaseStore(dataDir).newest('echo-app')?.sequence).toBe(3);
    expect(existsSync(lock)).toBe(false);
    // A lock of a live pid (or another host's) older than LOCK_STALE_MS is taken over too (a reused pid).
    const bootLock = join(dir, `${BOOTSTRAP_RELEASE_FILE}${RELEASE_LOCK_SUFFIX}`);
    writeFileSync(bootLock, JSON.stringify({ pid: process.pid, host: 'elsewhere', token: 'y' }));
    const old = (Date.now() - LOCK_STALE_MS - 5_000) / 1000;
    utimesSync(bootLock, old, old);
    releaseStore(dataDir).rememberBootstrap({ sequence: 4, contentSha256: SHA_B });
    expect(releaseStore(dataDir).newestBootstrap()?.sequence).toBe(4);
    expect(readdirSync(dir).filter((f) => !f.endsWith('.json'))).toEqual([]);
  }, 10_000);
});
