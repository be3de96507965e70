import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CliError, EXIT_USAGE } from './errors.js';
import { ioReason, outputExists, outputExistsError, STDIO } from './io.js';

// Issue 27: `keygen -o packager.key --public-out keys/packager.pub` wrote packager.key, then failed on the missing
// keys/ directory, and the retry was refused because packager.key existed. Every command now checks all of its
// output paths here, before it reads keys, computes or writes anything.

/** One output file a command will write, for {@link checkOutputs}. */
export interface PlannedOutput {
  /** The path as given (`-` is standard output and is not checked). */
  readonly path: string;
  /** The option that named it (`-o`, `--public-out`), for messages. */
  readonly flag: string;
  /** The file must not exist yet (key files without `--force`). */
  readonly noClobber?: boolean | undefined;
}

function notWritten(path: string, why: string): CliError {
  return new CliError('CLI_FILE_UNWRITABLE', `${path}: ${why}; nothing was written`, EXIT_USAGE);
}

/** Why the directory an output goes into cannot take it, or undefined when it can. */
function directoryProblem(dir: string): string | undefined {
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT') return `directory ${dir} does not exist`;
    if (code === 'ENOTDIR') return `${dir} is not a directory`;
    return `directory ${dir}: ${ioReason(err)}`;
  }
  try {
    // Creating the temporary file and renaming it both need write and search permission on the directory.
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    return `directory ${dir} is not writable`;
  }
  return undefined;
}

/** What a path names, following symbolic links; `absent` includes a dangling link. */
function kindOf(path: string): 'absent' | 'file' | 'directory' | 'other' {
  try {
    const s = statSync(path);
    return s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other';
  } catch {
    return 'absent';
  }
}

/** Refuses one output path: see {@link checkOutputs}. */
function checkOutput(out: PlannedOutput): void {
  if (out.path === '') throw new CliError('CLI_USAGE', `${out.flag} names no file (an empty path)`);
  const problem = directoryProblem(dirname(out.path));
  if (problem !== undefined) throw notWritten(out.path, problem);
  const kind = kindOf(out.path);
  if (kind === 'directory') throw notWritten(out.path, 'is a directory');
  // The output replaces the path by a rename: never do that to /dev/null, a FIFO or a socket.
  if (kind === 'other') throw notWritten(out.path, 'not a regular file (use - for standard output)');
  if (out.noClobber === true && outputExists(out.path)) throw outputExistsError(out.path);
}

/**
 * Checks every output of a command before it writes, or even computes, anything: so that a bad second path
 * never leaves the first file written (and a retry refused). For each path other than `-`: its directory
 * exists, is a directory and can be written; the path is not a directory, a device or other non-regular file;
 * with `noClobber`, nothing exists there yet. No two outputs may name the same file. The writers check again
 * when they write (the file system can change meanwhile), so this is about telling the user early, not safety.
 * @throws {@link CliError} `CLI_FILE_UNWRITABLE`, `CLI_OUTPUT_EXISTS`, `CLI_USAGE`.
 */
export function checkOutputs(outputs: readonly PlannedOutput[]): void {
  const files = outputs.filter((o) => o.path !== STDIO);
  files.forEach((out, i) => {
    const same = files.slice(0, i).find((o) => resolve(o.path) === resolve(out.path));
    if (same !== undefined)
      throw new CliError('CLI_USAGE', `${same.flag} and ${out.flag} name the same file (${out.path})`);
  });
  for (const out of files) checkOutput(out);
}
