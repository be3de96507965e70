import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { WorkflowError } from './errors.js';
import { quoteName } from './json-value.js';
import { parseResourcePath } from './resource-path.js';

/** The packager's resource directories, searched in this order (docs/interfaces.md §1.1). */
export const DEFAULT_RESOURCE_DIRS: readonly string[] = [
  '/community-resources',
  '/local-resources1',
  '/local-resources2',
];

/** Default cap for one resource file (1 MiB). */
export const MAX_RESOURCE_BYTES = 1024 * 1024;

/** A file found by {@link resolveFile}. */
export interface ResolvedFile {
  /** Canonical form of the requested path: `/` + segments joined by `/`. */
  path: string;
  /** The configured directory (as given) that held the file. */
  dir: string;
  /** Real path of the file, inside the real path of `dir`. */
  realPath: string;
  bytes: Uint8Array;
}

/** A directory list prepared once per operation: configured name, real path (null when missing), and a cache of
 * the real paths of sub-directories already resolved in this operation (null when missing). */
export interface RootDir {
  dir: string;
  real: string | null;
  parents: Map<string, string | null>;
}

/** Resolves each configured directory to its real path once; missing directories are kept and skipped later. */
export function prepareRoots(dirs: readonly string[]): RootDir[] {
  return dirs.map((dir) => ({ dir, real: realOrNull(dir), parents: new Map<string, string | null>() }));
}

function realOrNull(dir: string): string | null {
  try {
    return realpathSync.native(dir);
  } catch {
    return null;
  }
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Finds `path` in the first directory that holds it as a regular file (SPEC.md §6.2) and reads it. The parent
 * directory's real path and, when the file is a symlink, its target must stay inside the directory's real path
 * (links may point within the directory, never out of it); a directory or special file does not count.
 *
 * @throws WorkflowError `WORKFLOW_RESOURCE_PATH_INVALID`, `WORKFLOW_RESOURCE_OUTSIDE_ROOT`,
 *   `WORKFLOW_RESOURCE_NOT_FOUND` (naming the path and every directory searched), `WORKFLOW_RESOURCE_TOO_LARGE`.
 */
export function resolveFile(path: string, roots: readonly RootDir[], maxBytes: number): ResolvedFile {
  const segments = parseResourcePath(path);
  const canonical = `/${segments.join('/')}`;
  for (const root of roots) {
    if (root.real === null) continue;
    const found = readInside(root, segments, canonical, maxBytes);
    if (found !== null)
      return { path: canonical, dir: root.dir, realPath: found.realPath, bytes: found.bytes };
  }
  const searched = roots.map((r) => r.dir).join(', ');
  throw new WorkflowError(
    'WORKFLOW_RESOURCE_NOT_FOUND',
    `resource ${quoteName(canonical)} was not found in any of: ${searched || '(no directories)'}`,
    { details: { errors: [{ pointer: '', detail: `searched ${searched}` }] } },
  );
}

function readInside(
  root: RootDir,
  segments: string[],
  canonical: string,
  maxBytes: number,
): { realPath: string; bytes: Uint8Array } | null {
  const parent = realParent(root, segments.slice(0, -1).join('/'), canonical);
  if (parent === null) return null;
  let real = join(parent, segments[segments.length - 1] as string);
  let st;
  try {
    st = lstatSync(real, { throwIfNoEntry: false });
  } catch (cause) {
    if (isMissing(cause)) return null;
    throw unreadable(canonical, cause);
  }
  if (st === undefined) return null;
  if (st.isSymbolicLink()) {
    // A link may point anywhere: resolve it and confine the target (S104). A dangling link counts as absent.
    try {
      real = realpathSync.native(real);
    } catch (cause) {
      if (isMissing(cause)) return null;
      throw unreadable(canonical, cause);
    }
    confine(root.real as string, real, canonical);
  } else if (!st.isFile()) {
    return null;
  }
  const bytes = readRegularFile(real, canonical, maxBytes);
  return bytes === null ? null : { realPath: real, bytes };
}

/** Real path of a sub-directory of the root, confined to the root; cached per operation; null when missing. */
function realParent(root: RootDir, relative: string, canonical: string): string | null {
  const rootReal = root.real as string;
  if (relative === '') return rootReal;
  const cached = root.parents.get(relative);
  if (cached !== undefined) return cached;
  let real: string | null;
  try {
    real = realpathSync.native(join(rootReal, relative));
  } catch (cause) {
    if (!isMissing(cause)) throw unreadable(canonical, cause);
    real = null;
  }
  if (real !== null) confine(rootReal, real, canonical);
  root.parents.set(relative, real);
  return real;
}

function confine(rootReal: string, real: string, canonical: string): void {
  const prefix = rootReal.endsWith(sep) ? rootReal : rootReal + sep;
  if (real === rootReal || real.startsWith(prefix)) return;
  throw new WorkflowError(
    'WORKFLOW_RESOURCE_OUTSIDE_ROOT',
    `resource ${quoteName(canonical)} resolves outside its resource directory (symbolic link)`,
  );
}

function readRegularFile(real: string, canonical: string, maxBytes: number): Uint8Array | null {
  let fd: number;
  try {
    // O_NOFOLLOW: a symlink swapped in after the check is refused; O_NONBLOCK: a FIFO cannot stall us.
    fd = openSync(real, OPEN_FLAGS);
  } catch (cause) {
    throw unreadable(canonical, cause);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    if (st.size > maxBytes) throw tooLarge(canonical, maxBytes);
    // Reads at most the size seen by fstat (<= maxBytes): a file growing meanwhile cannot exceed the cap.
    const buf = new Uint8Array(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function tooLarge(canonical: string, maxBytes: number): WorkflowError {
  return new WorkflowError(
    'WORKFLOW_RESOURCE_TOO_LARGE',
    `resource ${quoteName(canonical)} is larger than ${maxBytes} bytes`,
  );
}

function unreadable(canonical: string, cause: unknown): WorkflowError {
  const code = (cause as { code?: unknown } | null)?.code;
  return new WorkflowError(
    'WORKFLOW_RESOURCE_NOT_FOUND',
    `resource ${quoteName(canonical)} could not be read (${typeof code === 'string' ? code : 'error'})`,
    { cause },
  );
}
