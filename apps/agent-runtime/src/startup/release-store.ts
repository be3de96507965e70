import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { parseStrictJson } from '@org/workflow-compiler';
import { AgentError } from '@org/workflow-runtime';

/** The newest release of one package the agent accepted (ADR 0144). */
export interface RememberedRelease {
  readonly sequence: number;
  /** Lower-case hex SHA-256 of the package content (tells a reused sequence from the same release). */
  readonly contentSha256: string;
}

/** What the agent remembers per package id: the newest accepted release, kept across restarts. */
export interface ReleaseStore {
  /** The directory the releases live in; undefined without a data directory (rollback checked against the floor). */
  readonly dir: string | undefined;
  /**
   * The remembered newest release of `packageId`, or undefined when none was accepted yet (or there is no data
   * directory).
   * @throws {@link AgentError} `AGENT_RELEASE_STATE_UNREADABLE` when the file exists but cannot be read or is not
   *   what this agent wrote: start-up stops rather than forget the newest release.
   */
  newest(packageId: string): RememberedRelease | undefined;
  /**
   * Makes `release` the remembered newest of `packageId`, durably: the file is written beside, flushed to disk
   * (fsync), renamed over the old one and the directory flushed, so the new value survives `kill -9` and a power
   * cut once this returns. Without a data directory it does nothing.
   * Agents sharing one data directory cannot lower it: under the file's lock ({@link RELEASE_LOCK_SUFFIX}) the
   * value is read again, and a release that is not newer than it is written only when the file still holds
   * `basis`, the release this start checked against (its allowed downgrade); otherwise the newer value stays.
   * `basis` defaults to what {@link newest} of this store returned for `packageId` (null: nothing was remembered;
   * never read: the value is never lowered).
   * @throws {@link AgentError} `AGENT_RELEASE_STATE_UNWRITABLE` naming the file and the errno code (`ELOCKED` when
   *   another live process held the lock too long); `AGENT_RELEASE_STATE_UNREADABLE` as {@link newest}.
   */
  remember(
    packageId: string,
    release: RememberedRelease,
    deploymentId: string,
    basis?: RememberedRelease | null,
  ): void;
  /**
   * The newest signed bootstrap the agent accepted (ADR 0147), or undefined when none was (or there is no data
   * directory). Kept under the reserved name {@link BOOTSTRAP_RELEASE_FILE}, which no package id's file can take.
   * @throws {@link AgentError} `AGENT_RELEASE_STATE_UNREADABLE` as {@link newest}.
   */
  newestBootstrap(): RememberedRelease | undefined;
  /**
   * Makes `release` the remembered newest signed bootstrap, as durably and under the same lock and rule as
   * {@link remember} (`basis` defaults to what {@link newestBootstrap} of this store returned). Without a data
   * directory it does nothing.
   * @throws {@link AgentError} `AGENT_RELEASE_STATE_UNWRITABLE` naming the file and the errno code.
   */
  rememberBootstrap(release: RememberedRelease, basis?: RememberedRelease | null): void;
}

/** Subdirectory of the data directory that holds one file per package id. */
export const RELEASES_DIR = 'releases';
/**
 * The file of the newest signed bootstrap, in the same directory: a package id's file is named by 32 hex digits, so
 * no package id (not even `bootstrap`, the bootstrap STATEMENT's) can collide with it.
 */
export const BOOTSTRAP_RELEASE_FILE = 'bootstrap.json';
/** Larger than any file this agent writes; a larger one is refused unread. */
const MAX_RELEASE_FILE_BYTES = 16 * 1024;

/** The file of one package id: a hash of the id, so no package id ever becomes a path. */
export function releaseFileOf(dir: string, packageId: string): string {
  const key = createHash('sha256').update(packageId, 'utf8').digest('hex');
  return join(dir, `${key.slice(0, 32)}.json`);
}

const errnoOf = (err: unknown): string => (err as NodeJS.ErrnoException | undefined)?.code ?? 'error';

/** A package id as quoted in a message: JSON-escaped and cut, so no control character reaches the log. */
const quotedId = (id: string): string => JSON.stringify(id.length > 128 ? `${id.slice(0, 128)}…` : id);

/** Whose release a file holds: a package id's, or the bootstrap's (ADR 0147). */
type Subject = { readonly packageId: string } | { readonly bootstrap: true };

const subjectText = (who: Subject): string =>
  'packageId' in who ? `release of package ${quotedId(who.packageId)}` : 'bootstrap release';

function unreadable(who: Subject, path: string, why: string): never {
  const again = 'packageId' in who ? 'any release' : 'any signed bootstrap';
  throw new AgentError(
    'AGENT_RELEASE_STATE_UNREADABLE',
    `the remembered ${subjectText(who)} in ${JSON.stringify(path)} ${why}; ` +
      `start-up stops rather than forget it (remove the file only to accept ${again} again)`,
  );
}

function parse(who: Subject, path: string, bytes: Uint8Array): RememberedRelease {
  let value: unknown;
  try {
    value = parseStrictJson(bytes);
  } catch {
    return unreadable(who, path, 'is not JSON');
  }
  const v = value as Record<string, unknown> | null;
  const ok =
    typeof v === 'object' &&
    v !== null &&
    ('packageId' in who
      ? v['packageId'] === who.packageId
      : v['kind'] === 'bootstrap' && !('packageId' in v)) &&
    Number.isSafeInteger(v['sequence']) &&
    (v['sequence'] as number) >= 0 &&
    typeof v['contentSha256'] === 'string' &&
    /^[0-9a-f]{64}$/.test(v['contentSha256']);
  if (!ok)
    unreadable(
      who,
      path,
      'packageId' in who ? 'is not a release record of this package' : 'is not a bootstrap release record',
    );
  return { sequence: v['sequence'] as number, contentSha256: v['contentSha256'] as string };
}

/** The remembered release in `path`, or undefined when there is none. */
function read(who: Subject, path: string): RememberedRelease | undefined {
  let bytes: Uint8Array;
  try {
    if (statSync(path).size > MAX_RELEASE_FILE_BYTES)
      unreadable(who, path, `is larger than ${MAX_RELEASE_FILE_BYTES} bytes`);
    bytes = readFileSync(path);
  } catch (err) {
    if (err instanceof AgentError) throw err;
    // No such file, or a path component that is not a directory: nothing was remembered there.
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return undefined;
    return unreadable(who, path, `cannot be read (${errnoOf(err)})`);
  }
  return parse(who, path, bytes);
}

/** fsync of a directory, so a rename or a new entry in it is on disk; platforms that cannot do it are skipped. */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (err) {
    // Windows cannot open or fsync a directory; elsewhere a failure here is real.
    if (process.platform !== 'win32' || !['EISDIR', 'EPERM', 'EINVAL', 'EACCES'].includes(errnoOf(err)))
      throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Creates `dir` (mode 0700) when missing and flushes each new entry into its parent. */
function ensureDir(dir: string): void {
  try {
    if (statSync(dir).isDirectory()) return;
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
  }
  ensureDir(dirname(dir));
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    // Another agent on the same data directory made it meanwhile.
    if (errnoOf(err) === 'EEXIST' && statSync(dir).isDirectory()) return;
    throw err;
  }
  syncDir(dirname(dir));
}

function writeDurably(path: string, text: string): void {
  ensureDir(dirname(path));
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    syncDir(dirname(path));
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * The lock beside a release file (`<file>.lock`), taken with O_EXCL around read-compare-write: it holds
 * `{"pid","host","token"}` of its holder. A lock whose holder is gone cannot stay: one whose pid no longer runs on
 * this host, or that is older than {@link LOCK_STALE_MS} (a reused pid, another host or PID namespace, an empty
 * file left by a crash), is taken over.
 */
export const RELEASE_LOCK_SUFFIX = '.lock';
/** A lock older than this is taken over whoever holds it: holding it takes a read, a write and two fsyncs. */
export const LOCK_STALE_MS = 30_000;
/** How long {@link withLock} waits for a live holder before it gives up (`ELOCKED`). */
const LOCK_WAIT_MS = LOCK_STALE_MS + 15_000;

const pause = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number): void => void Atomics.wait(pause, 0, 0, ms);

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === 'EPERM';
  }
}

/** Whether the lock holding `text` (modified at `mtimeMs`) is left over by a holder that is gone. */
function isStale(text: string, mtimeMs: number): boolean {
  if (Date.now() - mtimeMs > LOCK_STALE_MS) return true;
  let holder: { pid?: unknown; host?: unknown } | undefined;
  try {
    holder = JSON.parse(text) as typeof holder;
  } catch {
    holder = undefined;
  }
  const pid = holder?.pid;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return Date.now() - mtimeMs > 2_000; // being written right now, or left empty by a crash
  return holder?.host === hostname() && !alive(pid);
}

/** Removes the stale lock that held `text`; when another process replaced it meanwhile, puts that one back. */
function takeOver(lock: string, text: string, token: string): void {
  const moved = `${lock}.${token}.stale`;
  try {
    renameSync(lock, moved);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return;
    throw err;
  }
  if (readText(moved) !== text) {
    try {
      linkSync(moved, lock);
    } catch {
      // Someone took the lock again meanwhile; theirs stands.
    }
  }
  rmSync(moved, { force: true });
}

/** Runs `fn` holding `<path>.lock` (see {@link RELEASE_LOCK_SUFFIX}); `fn` gets a check that the lock is still ours. */
function withLock<T>(path: string, fn: (stillHeld: () => boolean) => T): T {
  ensureDir(dirname(path));
  const lock = `${path}${RELEASE_LOCK_SUFFIX}`;
  const token = randomBytes(12).toString('hex');
  const text = JSON.stringify({ pid: process.pid, host: hostname(), token });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    let fd: number | undefined;
    try {
      fd = openSync(lock, 'wx', 0o600);
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err;
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
      break;
    }
    let held: string | undefined;
    let mtimeMs = Date.now();
    try {
      held = readText(lock);
      mtimeMs = statSync(lock).mtimeMs;
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw err;
    }
    if (held === undefined) continue; // released meanwhile
    if (isStale(held, mtimeMs)) {
      takeOver(lock, held, token);
      continue;
    }
    if (Date.now() > deadline)
      throw Object.assign(new Error('the release lock is held by another process'), { code: 'ELOCKED' });
    sleep(wait);
  }
  const stillHeld = (): boolean => readText(lock) === text;
  try {
    return fn(stillHeld);
  } finally {
    if (stillHeld()) rmSync(lock, { force: true });
  }
}

const sameRelease = (
  a: RememberedRelease | undefined | null,
  b: RememberedRelease | undefined | null,
): boolean =>
  (a ?? undefined) === (b ?? undefined) ||
  (a != null && b != null && a.sequence === b.sequence && a.contentSha256 === b.contentSha256);

/**
 * Under the lock: reads the file again and writes `text` of `release` unless that would lower (or replace at the
 * same sequence) a value this start did not check against (`basis`; undefined: never lower). Returns whether it
 * wrote.
 */
function rememberLocked(
  who: Subject,
  path: string,
  release: RememberedRelease,
  basis: RememberedRelease | null | undefined,
  text: string,
): boolean {
  return withLock(path, (stillHeld) => {
    const current = read(who, path);
    if (current !== undefined && release.sequence <= current.sequence) {
      if (sameRelease(current, release)) return false;
      // Not newer than what is on disk: only this start's own decision against exactly that value may replace it.
      if (basis === undefined || !sameRelease(current, basis)) return false;
    }
    if (!stillHeld()) throw Object.assign(new Error('the release lock was taken over'), { code: 'ELOCKED' });
    writeDurably(path, text);
    return true;
  });
}

/**
 * The agent's remembered releases (ADR 0144): `<dataDir>/releases/<hash of packageId>.json`, one small JSON file
 * per package id, and `<dataDir>/releases/bootstrap.json` for the newest signed bootstrap (ADR 0147), written with
 * fsync and an atomic rename. `dataDir` undefined: nothing is remembered.
 */
export function releaseStore(dataDir: string | undefined): ReleaseStore {
  const dir = dataDir === undefined ? undefined : join(dataDir, RELEASES_DIR);
  // What newest() / newestBootstrap() returned: the value this start checked against (the default basis).
  const seen = new Map<string, RememberedRelease | null>();
  const BOOTSTRAP = '\0bootstrap';
  return {
    dir,
    newest(packageId) {
      if (dir === undefined) return undefined;
      const found = read({ packageId }, releaseFileOf(dir, packageId));
      seen.set(packageId, found ?? null);
      return found;
    },
    remember(packageId, release, deploymentId, basis = seen.get(packageId)) {
      if (dir === undefined) return;
      const path = releaseFileOf(dir, packageId);
      const record = {
        packageId,
        sequence: release.sequence,
        contentSha256: release.contentSha256,
        acceptedAt: new Date().toISOString(),
        deploymentId,
      };
      try {
        rememberLocked({ packageId }, path, release, basis, `${JSON.stringify(record)}\n`);
      } catch (err) {
        if (err instanceof AgentError) throw err;
        throw new AgentError(
          'AGENT_RELEASE_STATE_UNWRITABLE',
          `deployment "${deploymentId}": the newest release of package ${quotedId(packageId)} cannot be ` +
            `remembered in ${JSON.stringify(path)} (${errnoOf(err)}); rollback protection needs a writable ` +
            'AGENT_DATA_DIR (or AGENT_DATA_DIR=off to check only packaging.minimumSequence)',
        );
      }
    },
    newestBootstrap() {
      if (dir === undefined) return undefined;
      const found = read({ bootstrap: true }, join(dir, BOOTSTRAP_RELEASE_FILE));
      seen.set(BOOTSTRAP, found ?? null);
      return found;
    },
    rememberBootstrap(release, basis = seen.get(BOOTSTRAP)) {
      if (dir === undefined) return;
      const path = join(dir, BOOTSTRAP_RELEASE_FILE);
      const record = {
        kind: 'bootstrap',
        sequence: release.sequence,
        contentSha256: release.contentSha256,
        acceptedAt: new Date().toISOString(),
      };
      try {
        rememberLocked({ bootstrap: true }, path, release, basis, `${JSON.stringify(record)}\n`);
      } catch (err) {
        if (err instanceof AgentError) throw err;
        throw new AgentError(
          'AGENT_RELEASE_STATE_UNWRITABLE',
          `the newest signed bootstrap cannot be remembered in ${JSON.stringify(path)} (${errnoOf(err)}); ` +
            'bootstrap rollback protection needs a writable AGENT_DATA_DIR (or AGENT_DATA_DIR=off to check only ' +
            'AGENT_BOOTSTRAP_MINIMUM_SEQUENCE)',
        );
      }
    },
  };
}
