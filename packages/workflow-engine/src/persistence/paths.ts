import { lstatSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { EngineError } from '../errors.js';

/** LMDB's lock file sits beside the store file (`noSubdir`). */
export const LOCK_SUFFIX = '-lock';

function refuse(where: string, why: string): never {
  throw new EngineError('ENGINE_PERSISTENCE_INVALID', `${where}: persistence file ${why}`);
}

function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The real path of `p`: its deepest existing ancestor resolved through symlinks, plus the missing rest;
 * undefined when that ancestor is a dangling symlink (opening it would create its target, wherever it is).
 */
function realPathOf(p: string): string | undefined {
  const missing: string[] = [];
  let cur = p;
  while (!lstatOrUndefined(cur)) {
    const parent = dirname(cur);
    if (parent === cur) break;
    missing.unshift(cur.slice(parent.length).replace(/^[\\/]+/, ''));
    cur = parent;
  }
  let base: string;
  try {
    base = lstatOrUndefined(cur) ? realpathSync(cur) : cur;
  } catch {
    return undefined;
  }
  return missing.length === 0 ? base : join(base, ...missing);
}

/**
 * Checks a relative store path and returns the real absolute path of the store file under `root`
 * (docs/security-requirements.md S126). Refused: empty, absolute, NUL, a `..` segment (even one that stays inside),
 * and any symlink — on the way or at the file or its lock file — that leads outside `root`. Nothing is created.
 * @param where - names the step (and deployment) in the message.
 * @throws EngineError `ENGINE_PERSISTENCE_INVALID`.
 */
export function resolveStorePath(root: string, rel: string, where: string): string {
  return resolveStore(root, rel, where).path;
}

/**
 * {@link resolveStorePath}, also returning the real path of `root` (where `store-files.ts` starts its walk).
 * @throws EngineError `ENGINE_PERSISTENCE_INVALID`.
 */
export function resolveStore(root: string, rel: string, where: string): { realRoot: string; path: string } {
  if (typeof rel !== 'string' || rel.trim() === '') refuse(where, 'is empty');
  if (rel.includes('\u0000')) refuse(where, 'contains NUL');
  if (isAbsolute(rel) || /^[\\/]/.test(rel) || /^[A-Za-z]:/.test(rel)) refuse(where, 'must be relative');
  if (rel.split(/[\\/]+/).some((s) => s === '..')) refuse(where, 'must not contain ".."');
  if (rel.endsWith('/') || rel.endsWith('\\') || rel.length > 1024) refuse(where, 'is not a file name');
  const realRoot = realPathOf(resolve(root)) ?? refuse(where, 'is under a dangling symlink');
  const full = resolve(realRoot, rel);
  if (!isInside(realRoot, full)) refuse(where, 'leaves the data directory');
  const real = realPathOf(full);
  if (real === undefined || !isInside(realRoot, real) || real === realRoot)
    refuse(where, 'leads out of the data directory');
  const lock = realPathOf(real + LOCK_SUFFIX);
  if (lock === undefined || !isInside(realRoot, lock))
    refuse(where, 'lock file leads out of the data directory');
  return { realRoot, path: real };
}

function lstatOrUndefined(p: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}
