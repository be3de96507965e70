import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  statSync,
} from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';
import { EngineError } from '../errors.js';
import { LOCK_SUFFIX } from './paths.js';

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW } = constants;
/** LMDB's own mode for the files it creates (lmdb-js `open`). */
const FILE_MODE = 0o664;
/** Each process sees its own open files here (Linux): a path through a directory fd, like `openat`. */
const PROC_FD = '/proc/self/fd';

function refuse(where: string, why: string): never {
  throw new EngineError('ENGINE_PERSISTENCE_INVALID', `${where}: persistence file ${why}`);
}

function codeOf(err: unknown): unknown {
  return (err as { code?: unknown }).code;
}

/**
 * The files of one store, opened so that nothing swapped into the data directory after the path check can
 * redirect them (S126, ADR 0067). LMDB opens by path; it is given {@link lmdbPath}, which reaches the store's
 * directory through a directory fd held here, and after LMDB has opened, {@link verifyOpenedByLmdb} checks that
 * it holds the very files opened here. The fds stay open until {@link close}: closing one of them earlier would
 * drop the POSIX record locks LMDB keeps on the lock file.
 */
export class StoreFiles {
  private constructor(
    /** The path LMDB opens. */
    readonly lmdbPath: string,
    private readonly fds: number[],
    /** The data file exists with content (it is checked as a store before LMDB maps it), or was just created. */
    readonly existed: boolean,
    private readonly dataFd: number,
    private readonly lockFd: number | undefined,
  ) {}

  /**
   * Opens the directory of `realPath` (already checked by `resolveStorePath` to lie under `realRoot`) by walking
   * from `realRoot` one component at a time with O_NOFOLLOW | O_DIRECTORY, creating missing ones; then opens
   * the store file in it with O_NOFOLLOW (creating it when missing). The lock file is opened by
   * {@link openLock}, after the data file passed its checks. Without /proc/self/fd (not Linux) the path is used
   * as it is, and only {@link verifyOpenedByLmdb} guards it.
   * @throws EngineError `ENGINE_PERSISTENCE_INVALID` when a component or the file is (now) a symlink or not a
   *   directory / regular file.
   */
  static open(realRoot: string, realPath: string, where: string): StoreFiles {
    const fds: number[] = [];
    try {
      if (!existsSync(PROC_FD)) return StoreFiles.openByPath(realPath, where, fds);
      mkdirSync(realRoot, { recursive: true }); // the data directory itself is configuration, not store input
      let dir = openSync(realRoot, O_RDONLY | O_DIRECTORY);
      fds.push(dir);
      const rel = relative(realRoot, dirname(realPath));
      for (const name of rel === '' ? [] : rel.split(sep)) {
        const at = `${PROC_FD}/${dir}/${name}`;
        try {
          mkdirSync(at);
        } catch (err) {
          if (codeOf(err) !== 'EEXIST') throw err;
        }
        try {
          dir = openSync(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        } catch (err) {
          const c = codeOf(err);
          if (c === 'ELOOP' || c === 'ENOTDIR')
            refuse(where, 'has a symlink or file on its way (changed since it was checked)');
          throw err;
        }
        closeSync(fds.pop()!); // only the last directory is needed
        fds.push(dir);
      }
      const lmdbPath = `${PROC_FD}/${dir}/${basename(realPath)}`;
      const { fd, existed } = openFile(lmdbPath, where);
      fds.push(fd);
      return new StoreFiles(lmdbPath, fds, existed, fd, undefined);
    } catch (err) {
      for (const fd of fds.reverse()) closeSync(fd);
      throw err;
    }
  }

  private static openByPath(realPath: string, where: string, fds: number[]): StoreFiles {
    mkdirSync(dirname(realPath), { recursive: true });
    const { fd, existed } = openFile(realPath, where);
    fds.push(fd);
    return new StoreFiles(realPath, fds, existed, fd, undefined);
  }

  /** The data file's fd, for the checks made before LMDB maps it (S128). */
  get fd(): number {
    return this.dataFd;
  }

  /**
   * Opens (or creates) the lock file beside the data file, with O_NOFOLLOW.
   * @throws EngineError `ENGINE_PERSISTENCE_INVALID` when it is a symlink or not a regular file.
   */
  openLock(where: string): StoreFiles {
    const lock = openFile(this.lmdbPath + LOCK_SUFFIX, where, true).fd;
    this.fds.push(lock);
    return new StoreFiles(this.lmdbPath, this.fds, this.existed, this.dataFd, lock);
  }

  /**
   * After LMDB opened {@link lmdbPath}: the data and lock files LMDB holds must be the ones opened here. On
   * Linux every open fd of the process is compared by device and inode: each of the two files must be open at
   * least twice (here and in LMDB). A store file or lock file replaced by a symlink between the opens is found.
   * @throws EngineError `ENGINE_PERSISTENCE_INVALID`.
   */
  verifyOpenedByLmdb(where: string): void {
    if (!existsSync(PROC_FD) || this.lockFd === undefined) return;
    const wanted = [fstatSync(this.dataFd, { bigint: true }), fstatSync(this.lockFd, { bigint: true })];
    const seen = wanted.map(() => 0);
    for (const name of readdirSync(PROC_FD)) {
      let st;
      try {
        st = statSync(`${PROC_FD}/${name}`, { bigint: true });
      } catch {
        continue; // closed meanwhile, or the readdir's own fd
      }
      wanted.forEach((w, i) => {
        if (st.dev === w.dev && st.ino === w.ino) seen[i]!++;
      });
    }
    if (seen.some((n) => n < 2)) refuse(where, 'was replaced while it was opened');
  }

  /** Closes the fds (after LMDB closed the environment). */
  close(): void {
    for (const fd of this.fds.splice(0).reverse()) {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
    }
  }
}

/** Opens an existing regular file read-write with O_NOFOLLOW, or creates it (O_EXCL) when there is none. */
function openFile(path: string, where: string, lock = false): { fd: number; existed: boolean } {
  const what = lock ? 'lock file' : 'file';
  let fd: number;
  let existed = true;
  try {
    fd = openSync(path, O_RDWR | O_NOFOLLOW);
  } catch (err) {
    const c = codeOf(err);
    if (c === 'ELOOP') refuse(where, `${what} is a symlink (changed since it was checked)`);
    if (c === 'EISDIR') notRegular(where, what);
    if (c !== 'ENOENT') throw err;
    try {
      fd = openSync(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
      existed = false;
    } catch (err2) {
      if (codeOf(err2) === 'EEXIST' || codeOf(err2) === 'ELOOP')
        refuse(where, `${what} appeared while it was opened`);
      throw err2;
    }
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    notRegular(where, what);
  }
  return { fd, existed };
}

/** S128: as any other file that is not a store. */
function notRegular(where: string, what: string): never {
  throw new EngineError(
    'ENGINE_PERSISTENCE_CORRUPT',
    `${where}: the persistence ${what} is not a regular file; the file was left untouched`,
  );
}
