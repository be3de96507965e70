import { constants, existsSync, type BigIntStats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { failed, notFound, notPermitted } from './refusals.js';

/**
 * Opening files below a directory without following anything an untrusted writer could plant there (S132, S134;
 * ADR 0073). Node has no `openat`, so on Linux every step goes through `/proc/self/fd/<fd>/<name>`: the magic
 * link jumps to the directory that fd holds, whatever was renamed or swapped since, and `O_NOFOLLOW` refuses a
 * symlink as the last component. Each directory on the way is opened the same way with `O_DIRECTORY`, and every
 * opened file is checked with `fstat` after the open (regular file, one link, same device). Where `/proc` is
 * missing the same steps run on plain paths, with the `fstat` identity compared to the `lstat` before it: a
 * narrower window, not none (README).
 */

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
/** Checked once: the race-free path needs Linux's `/proc/self/fd`. */
export const HAS_PROC_FD = existsSync('/proc/self/fd');

/** An open directory: operations name their children through `path`. */
export interface Dir {
  readonly fh: FileHandle;
  /** `/proc/self/fd/<fd>` (race-free) or the directory's path. */
  readonly path: string;
  readonly dev: bigint;
}

const code = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

function dirOf(fh: FileHandle, path: string, st: BigIntStats): Dir {
  return { fh, path: HAS_PROC_FD ? `/proc/self/fd/${fh.fd}` : path, dev: st.dev };
}

/** Opens the entry's own directory (a trusted path from the configuration, resolved at start). */
export async function openBase(dir: string, what: string): Promise<Dir> {
  let fh: FileHandle;
  try {
    fh = await open(dir, O_RDONLY | O_DIRECTORY);
  } catch (err) {
    if (code(err) === 'ENOENT') throw notFound(what);
    throw failed(what, err);
  }
  return dirOf(fh, dir, await fh.stat({ bigint: true }));
}

/** `lstat` of a child, or undefined when there is none. */
export async function lstatChild(dir: Dir, name: string, what: string): Promise<BigIntStats | undefined> {
  try {
    return await lstat(`${dir.path}/${name}`, { bigint: true });
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return undefined;
    throw failed(what, err);
  }
}

/** After the open: the object is what the `lstat` named (fallback) and on the directory's device (mounts). */
async function checkOpened(
  fh: FileHandle,
  dir: Dir,
  before: BigIntStats,
  what: string,
): Promise<BigIntStats> {
  const st = await fh.stat({ bigint: true });
  if (st.dev !== dir.dev) throw notPermitted(what, 'on another device');
  if (st.ino !== before.ino || st.dev !== before.dev) throw notPermitted(what, 'changed while it was opened');
  return st;
}

async function openChild(dir: Dir, name: string, flags: number, what: string): Promise<FileHandle> {
  try {
    return await open(`${dir.path}/${name}`, flags | O_NOFOLLOW | O_NOCTTY);
  } catch (err) {
    // ELOOP: a symlink as last component; ENOTDIR: a symlink or file where a directory was asked for.
    if (code(err) === 'ELOOP' || code(err) === 'ENOTDIR' || code(err) === 'ENXIO')
      throw notPermitted(what, 'a symbolic link or special file');
    if (code(err) === 'ENOENT') throw notFound(what);
    throw failed(what, err);
  }
}

/** Opens a child directory (never a link). The caller closes it. */
export async function openSubdir(dir: Dir, name: string, what: string): Promise<Dir> {
  const before = await lstatChild(dir, name, what);
  if (before === undefined) throw notFound(what);
  if (before.isSymbolicLink()) throw notPermitted(what, 'a symbolic link');
  if (!before.isDirectory()) throw notFound(what);
  const fh = await openChild(dir, name, O_RDONLY | O_DIRECTORY, what);
  try {
    const st = await checkOpened(fh, dir, before, what);
    return dirOf(fh, `${dir.path}/${name}`, st);
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * Opens a regular file of `dir` for reading: never a link, FIFO, device or socket (checked before, so nothing
 * special is opened, and after, with `fstat`), never a file with other hard links, never on another device.
 * The caller closes it.
 */
export async function openRegular(dir: Dir, name: string, what: string): Promise<[FileHandle, BigIntStats]> {
  const before = await lstatChild(dir, name, what);
  if (before === undefined) throw notFound(what);
  if (!before.isFile()) throw notPermitted(what, 'not a regular file (a link, directory or special file)');
  if (before.nlink !== 1n) throw notPermitted(what, 'a file with other hard links');
  const fh = await openChild(dir, name, O_RDONLY | O_NONBLOCK, what);
  try {
    const st = await checkOpened(fh, dir, before, what);
    if (!st.isFile() || st.nlink !== 1n) throw notPermitted(what, 'not a regular file with one link');
    return [fh, st];
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** Opens `dir` and walks down `segments` (every step a real directory), runs `fn`, closes everything. */
export async function withDir<T>(
  base: string,
  segments: readonly string[],
  what: string,
  fn: (dir: Dir) => Promise<T>,
): Promise<T> {
  const opened: Dir[] = [await openBase(base, what)];
  try {
    for (const s of segments) opened.push(await openSubdir(opened.at(-1)!, s, what));
    return await fn(opened.at(-1)!);
  } finally {
    for (const d of opened.reverse()) await d.fh.close().catch(() => undefined);
  }
}
