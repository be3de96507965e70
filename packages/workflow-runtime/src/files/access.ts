import { lstatSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { BootstrapFileAccess, DeploymentRecord } from '@org/workflow-compiler';
import { AgentError } from '../errors.js';
import { namePatternProblem } from './regex-budget.js';

/** Where relative `directoryOrFile` paths start and where they must stay (RuntimeOptions). */
export interface FileAccessOptions {
  /** Base of relative paths (the agent: its working directory; the test runner: the test's directory). */
  readonly baseDir: string;
  /** When set, every entry must resolve (real path) inside it (the test runner's test root, S155). */
  readonly root?: string | undefined;
}

/** One `allowFileAccess` entry, checked at start-up (docs/interfaces.md §3.4). */
export interface FileAccess {
  readonly deploymentId: string;
  readonly id: string;
  /** `directoryOrFile` made absolute (lexically); resolved again at every use (see {@link resolveAccess}). */
  readonly path: string;
  readonly root: string | undefined;
  readonly read: boolean;
  readonly list: boolean;
  readonly write: boolean;
  readonly delete: boolean;
  /** Anchored; a relative path must match one of them (none: every path). */
  readonly patterns: readonly RegExp[];
}

/** Where an entry is right now: a directory, or one file in its directory. */
export interface ResolvedAccess {
  /** Real path of the directory every operation starts from. */
  readonly dir: string;
  /** Set when `directoryOrFile` names a file: the only name that may be used. */
  readonly fileName: string | undefined;
}

const granted = (v: unknown): boolean => v === true || v === 'true';

function invalid(a: { deploymentId: string; id: string }, why: string): AgentError {
  return new AgentError(
    'AGENT_FILE_ACCESS_INVALID',
    `deployment "${a.deploymentId}" allowFileAccess "${a.id}": ${why}`,
  );
}

function isInside(dir: string, p: string): boolean {
  const rel = relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

function compilePatterns(deploymentId: string, entry: BootstrapFileAccess): RegExp[] {
  return (entry.patterns ?? []).map((p, i) => {
    const problem = namePatternProblem(p);
    if (problem !== undefined) throw invalid({ deploymentId, id: entry.id }, `patterns[${i}] ${problem}`);
    return new RegExp(`^(?:${p})$`);
  });
}

/**
 * Resolves an entry's path now: real path (the configured path is trusted configuration; what lies below it is
 * not), inside the root when one is set, and a directory or a regular file. Undefined when it does not exist.
 * @throws AgentError `AGENT_FILE_ACCESS_INVALID` for a path out of the root or of another file type.
 */
export function resolveAccess(a: FileAccess): ResolvedAccess | undefined {
  let real: string;
  try {
    real = realpathSync(a.path);
  } catch {
    return undefined;
  }
  if (a.root !== undefined && !isInside(a.root, real))
    throw invalid(a, 'directoryOrFile leads out of the test directory');
  const st = statSync(real);
  if (st.isDirectory()) return { dir: real, fileName: undefined };
  if (st.isFile()) return { dir: dirname(real), fileName: basename(real) };
  throw invalid(a, 'directoryOrFile is neither a directory nor a regular file');
}

function absolutePath(deploymentId: string, entry: BootstrapFileAccess, options: FileAccessOptions): string {
  const p = entry.directoryOrFile;
  if (p.length === 0 || p.includes('\0'))
    throw invalid({ deploymentId, id: entry.id }, 'bad directoryOrFile');
  const abs = resolve(options.baseDir, p);
  if (options.root !== undefined && !isInside(options.root, abs))
    throw invalid({ deploymentId, id: entry.id }, 'directoryOrFile leads out of the test directory');
  return abs;
}

/**
 * Compiles a record's `allowFileAccess` entries (start-up): patterns through the regex guard (S137), paths made
 * absolute against `baseDir` and kept inside `root`, `required` paths present. Flags not set are not granted.
 * @throws AgentError `AGENT_FILE_ACCESS_INVALID` naming deployment and entry.
 */
export function compileFileAccess(
  record: DeploymentRecord,
  options: FileAccessOptions,
): ReadonlyMap<string, FileAccess> {
  const out = new Map<string, FileAccess>();
  const deploymentId = record.deploymentId;
  const root = options.root === undefined ? undefined : realpathSync(options.root);
  for (const entry of record.allowFileAccess ?? []) {
    const access: FileAccess = {
      deploymentId,
      id: entry.id,
      path: absolutePath(deploymentId, entry, options),
      root,
      read: granted(entry.READ),
      list: granted(entry.LIST),
      write: granted(entry.WRITE),
      delete: granted(entry.DELETE),
      patterns: compilePatterns(deploymentId, entry),
    };
    const now = resolveAccess(access);
    if (now === undefined && granted(entry.required)) {
      const missing = lstatSync(access.path, { throwIfNoEntry: false }) === undefined;
      throw invalid(
        access,
        missing ? 'the required path does not exist' : 'the required path cannot be resolved',
      );
    }
    out.set(entry.id, access);
  }
  return out;
}
