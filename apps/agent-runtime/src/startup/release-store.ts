import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
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
   * @throws {@link AgentError} `AGENT_RELEASE_STATE_UNWRITABLE` naming the file and the errno code.
   */
  remember(packageId: string, release: RememberedRelease, deploymentId: string): void;
}

/** Subdirectory of the data directory that holds one file per package id. */
export const RELEASES_DIR = 'releases';
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

function unreadable(packageId: string, path: string, why: string): never {
  throw new AgentError(
    'AGENT_RELEASE_STATE_UNREADABLE',
    `the remembered release of package ${quotedId(packageId)} in ${JSON.stringify(path)} ${why}; ` +
      'start-up stops rather than forget it (remove the file only to accept any release again)',
  );
}

function parse(packageId: string, path: string, bytes: Uint8Array): RememberedRelease {
  let value: unknown;
  try {
    value = parseStrictJson(bytes);
  } catch {
    return unreadable(packageId, path, 'is not JSON');
  }
  const v = value as Record<string, unknown> | null;
  const ok =
    typeof v === 'object' &&
    v !== null &&
    v['packageId'] === packageId &&
    Number.isSafeInteger(v['sequence']) &&
    (v['sequence'] as number) >= 0 &&
    typeof v['contentSha256'] === 'string' &&
    /^[0-9a-f]{64}$/.test(v['contentSha256']);
  if (!ok) unreadable(packageId, path, 'is not a release record of this package');
  return { sequence: v['sequence'] as number, contentSha256: v['contentSha256'] as string };
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
  mkdirSync(dir, { mode: 0o700 });
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
 * The agent's remembered releases (ADR 0144): `<dataDir>/releases/<hash of packageId>.json`, one small JSON file
 * per package id, written with fsync and an atomic rename. `dataDir` undefined: nothing is remembered.
 */
export function releaseStore(dataDir: string | undefined): ReleaseStore {
  const dir = dataDir === undefined ? undefined : join(dataDir, RELEASES_DIR);
  return {
    dir,
    newest(packageId) {
      if (dir === undefined) return undefined;
      const path = releaseFileOf(dir, packageId);
      let bytes: Uint8Array;
      try {
        if (statSync(path).size > MAX_RELEASE_FILE_BYTES)
          unreadable(packageId, path, `is larger than ${MAX_RELEASE_FILE_BYTES} bytes`);
        bytes = readFileSync(path);
      } catch (err) {
        if (err instanceof AgentError) throw err;
        // No such file, or a path component that is not a directory: nothing was remembered there.
        if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return undefined;
        return unreadable(packageId, path, `cannot be read (${errnoOf(err)})`);
      }
      return parse(packageId, path, bytes);
    },
    remember(packageId, release, deploymentId) {
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
        writeDurably(path, `${JSON.stringify(record)}\n`);
      } catch (err) {
        throw new AgentError(
          'AGENT_RELEASE_STATE_UNWRITABLE',
          `deployment "${deploymentId}": the newest release of package ${quotedId(packageId)} cannot be ` +
            `remembered in ${JSON.stringify(path)} (${errnoOf(err)}); rollback protection needs a writable ` +
            'AGENT_DATA_DIR (or AGENT_DATA_DIR=off to check only packaging.minimumSequence)',
        );
      }
    },
  };
}
