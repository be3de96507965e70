import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { TestRunnerError } from './errors.js';
import { quoteName } from './internal/text.js';

/** Longest path text accepted in a config or test file. */
export const MAX_PATH_LENGTH = 4096;

/**
 * Where one test's paths start and where they must stay (S155). `base` is the test directory that holds the test
 * (what `fromDirectory` and a leading `/` are relative to); `dir` is the directory every file must stay inside:
 * the test directory, or the config's `fileRoot` when one is set; `real` is its real path, for symlink checks.
 */
export interface TestRoot {
  base: string;
  dir: string;
  real: string;
}

/** Refuses path text that cannot be a portable relative path: empty where a name is needed, NUL, backslash. */
function checkText(path: string, what: string): void {
  if (path.length > MAX_PATH_LENGTH) {
    throw new TestRunnerError(
      'TESTRUNNER_PATH_INVALID',
      `${what} is longer than ${MAX_PATH_LENGTH} characters`,
    );
  }
  if (path.includes('\0') || path.includes('\\')) {
    throw new TestRunnerError(
      'TESTRUNNER_PATH_INVALID',
      `${what} ${quoteName(path)} holds a NUL or a backslash; use "/" as the separator`,
    );
  }
}

/** True when `p` is `dir` itself or below it (both absolute and normalised). */
export function isInside(dir: string, p: string): boolean {
  const prefix = dir.endsWith(sep) ? dir : dir + sep;
  return p === dir || p.startsWith(prefix);
}

function outside(what: string, path: string, why: string): TestRunnerError {
  return new TestRunnerError(
    'TESTRUNNER_PATH_OUTSIDE_ROOT',
    `${what} ${quoteName(path)} leads out of the test directory (${why})`,
    { details: { what, rule: why } },
  );
}

/**
 * Resolves a directory named in the runner config (`resourceDirs`, `testDirs`, `fileRoot`) against the project
 * root (the config file's directory). It must stay inside the project root, lexically.
 *
 * @throws TestRunnerError `TESTRUNNER_PATH_INVALID`, `TESTRUNNER_PATH_OUTSIDE_ROOT`.
 */
export function resolveConfigDir(projectRoot: string, path: string, what: string): string {
  checkText(path, what);
  if (isAbsolute(path)) throw outside(what, path, 'an absolute path');
  const abs = resolve(projectRoot, path);
  if (!isInside(projectRoot, abs)) throw outside(what, path, 'it climbs above the config file directory');
  return abs;
}

/**
 * Resolves `fromDirectory` (docs/interfaces.md §7.3). An empty value means the directory holding the test file; any
 * other value — with or without a leading `/` — is relative to the test directory. The result must stay inside
 * the root.
 *
 * @throws TestRunnerError `TESTRUNNER_PATH_INVALID`, `TESTRUNNER_PATH_OUTSIDE_ROOT`.
 */
export function resolveFromDirectory(root: TestRoot, testFile: string, fromDirectory: string): string {
  checkText(fromDirectory, 'fromDirectory');
  const abs = fromDirectory === '' ? dirname(testFile) : resolve(root.base, `.${sep}${fromDirectory}`);
  if (!isInside(root.dir, abs)) throw outside('fromDirectory', fromDirectory, '".." climbs above the root');
  return abs;
}

/**
 * Resolves a file named by a test (`useThisTestConfigFile`, `useThisTestBootstrapFile`, `returnThisFile`): a
 * leading `/` means "from the test directory", anything else is relative to `fromDirectory`. Lexical check only; read
 * the file with {@link readConfinedFile}, which also refuses symbolic links that lead out.
 *
 * @throws TestRunnerError `TESTRUNNER_PATH_INVALID`, `TESTRUNNER_PATH_OUTSIDE_ROOT`.
 */
export function resolveTestFile(root: TestRoot, fromDir: string, path: string, what: string): string {
  checkText(path, what);
  if (path === '') throw new TestRunnerError('TESTRUNNER_PATH_INVALID', `${what} is empty`);
  const abs = path.startsWith('/') ? resolve(root.base, `.${path}`) : resolve(fromDir, path);
  if (!isInside(root.dir, abs)) throw outside(what, path, '".." climbs above the root');
  return abs;
}

/** The real path of a directory that must exist, for {@link TestRoot}. */
export function realDirectory(dir: string, what: string): string {
  try {
    return realpathSync.native(dir);
  } catch (cause) {
    throw new TestRunnerError('TESTRUNNER_FILE_NOT_FOUND', `${what} ${quoteName(dir)} does not exist`, {
      cause,
    });
  }
}

/** A file read by {@link readConfinedFile}. */
export interface ConfinedFile {
  bytes: Uint8Array;
  /** Its real path, inside the root's real path. */
  realPath: string;
}

// O_NOFOLLOW: a link swapped in after the real-path check is refused; O_NONBLOCK: a FIFO cannot stall the read.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Reads a regular file whose real path (every symbolic link resolved) is inside `root.real` (S155), at most
 * `maxBytes`. `display` names it in messages (relative to the project, never the caller's absolute layout).
 *
 * @throws TestRunnerError `TESTRUNNER_PATH_OUTSIDE_ROOT` (a link leads out), `TESTRUNNER_FILE_NOT_FOUND` (missing,
 *   unreadable or not a regular file), `TESTRUNNER_FILE_TOO_LARGE`.
 */
export function readConfinedFile(
  root: TestRoot,
  abs: string,
  maxBytes: number,
  display: string,
): ConfinedFile {
  let real: string;
  try {
    real = realpathSync.native(abs);
  } catch (cause) {
    throw new TestRunnerError('TESTRUNNER_FILE_NOT_FOUND', `${display} was not found`, { cause });
  }
  if (!isInside(root.real, real))
    throw outside(display, relative(root.dir, abs), 'a symbolic link leads out');
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (cause) {
    throw new TestRunnerError('TESTRUNNER_FILE_NOT_FOUND', `${display} could not be opened`, { cause });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      throw new TestRunnerError('TESTRUNNER_FILE_NOT_FOUND', `${display} is not a regular file`);
    if (st.size > maxBytes) {
      throw new TestRunnerError('TESTRUNNER_FILE_TOO_LARGE', `${display} is larger than ${maxBytes} bytes`);
    }
    const buf = new Uint8Array(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    return { bytes: buf.subarray(0, n), realPath: real };
  } finally {
    closeSync(fd);
  }
}
