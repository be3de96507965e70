import { randomBytes } from 'node:crypto';
import { createReadStream, rmSync, statSync } from 'node:fs';
import { link, mkdtemp, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createPackage, openPackageStream, repackage, type CreatePackageOptions } from '@org/oapp-format';
import type { OpenPackageOptions, RepackageOptions, VerifiedPackage } from '@org/oapp-format';
import { CliError, EXIT_USAGE } from './errors.js';
import { counted, progressFor } from './progress.js';

// Every byte the command line reads or writes goes through this module: small inputs whole, packages as
// streams, outputs atomically (a temporary file in the target's directory, renamed into place when complete).
// `writePackage` and `openPackageTo` are the two places a streaming package writer/reader plugs in.

/** The operand that means standard input or standard output. */
export const STDIO = '-';
const MiB = 1024 * 1024;
/** Read size for package streams. */
const READ_CHUNK = MiB;

/** Files and directories to remove if the process is interrupted (SIGINT/SIGTERM) or fails. */
const pending = new Set<string>();

/** Removes every temporary file still pending (synchronous: runs in signal handlers). */
export function removePending(): void {
  for (const p of pending) rmSync(p, { force: true, recursive: true });
  pending.clear();
}

function unreadable(path: string, why: string, cause?: unknown): CliError {
  return new CliError('CLI_FILE_UNREADABLE', `${path}: ${why}`, EXIT_USAGE, { cause });
}

function ioReason(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return typeof code === 'string' ? code : 'cannot be read';
}

async function* chunksOf(stream: NodeJS.ReadableStream): AsyncGenerator<Uint8Array, void, undefined> {
  for await (const chunk of stream) yield chunk as Uint8Array;
}

/** The chunks of a file; a read error (no permission, removed meanwhile) becomes `CLI_FILE_UNREADABLE`. */
async function* fileChunks(path: string): AsyncGenerator<Uint8Array, void, undefined> {
  const stream = createReadStream(path, { highWaterMark: READ_CHUNK });
  try {
    for await (const chunk of stream) yield chunk as Uint8Array;
  } catch (err) {
    throw unreadable(path, ioReason(err), err);
  } finally {
    stream.destroy();
  }
}

/**
 * Reads a whole input (a file, or standard input for `-`), refusing more than `maxBytes`.
 * @throws {@link CliError} `CLI_FILE_UNREADABLE`.
 */
export async function readInput(path: string, maxBytes: number): Promise<Uint8Array> {
  const name = path === STDIO ? 'standard input' : path;
  let source: NodeJS.ReadableStream;
  if (path === STDIO) source = process.stdin;
  else {
    const size = await sizeOf(path);
    if (size > maxBytes) throw unreadable(name, `larger than ${maxBytes} bytes`);
    source = createReadStream(path);
  }
  // (Errors of the stream, e.g. no read permission, are reported as CLI_FILE_UNREADABLE below.)
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of chunksOf(source)) {
      total += chunk.length;
      if (total > maxBytes) throw unreadable(name, `larger than ${maxBytes} bytes`);
      parts.push(chunk);
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw unreadable(name, ioReason(err), err);
  }
  return Buffer.concat(parts, total);
}

async function sizeOf(path: string): Promise<number> {
  try {
    const s = await stat(path);
    if (s.isDirectory()) throw unreadable(path, 'is a directory');
    return s.size;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw unreadable(path, ioReason(err), err);
  }
}

/** A package input that can be read more than once (standard input is spooled to a temporary file first). */
export interface Input {
  /** The name to show (`standard input` for `-`). */
  readonly name: string;
  readonly size: number;
  /** A fresh stream of the whole input. */
  open(): AsyncIterable<Uint8Array>;
  /** Removes the spool file, if any. */
  dispose(): Promise<void>;
}

/**
 * Opens a package input for streaming. Standard input is copied to a private temporary file (mode 0600) so the
 * policy report can read the package prefix more than once.
 * @throws {@link CliError} `CLI_FILE_UNREADABLE`.
 */
export async function packageInput(path: string): Promise<Input> {
  if (path !== STDIO) {
    const size = await sizeOf(path);
    return {
      name: path,
      size,
      open: () => fileChunks(path),
      dispose: () => Promise.resolve(),
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'oapp-'));
  pending.add(dir);
  const spool = join(dir, 'stdin.oapp');
  const fh = await open(spool, 'wx', 0o600);
  let size = 0;
  try {
    for await (const chunk of chunksOf(process.stdin)) {
      size += chunk.length;
      await fh.write(chunk);
    }
  } finally {
    await fh.close();
  }
  return {
    name: 'standard input',
    size,
    open: () => fileChunks(spool),
    dispose: async () => {
      await rm(dir, { recursive: true, force: true });
      pending.delete(dir);
    },
  };
}

/** Options of the output writers. */
export interface OutputOptions {
  /** File mode of a new file (exact, not reduced by the umask); default 0666 less the umask. */
  readonly mode?: number | undefined;
  /** Refuse (`CLI_OUTPUT_EXISTS`) instead of replacing an existing file (key files without `--force`). */
  readonly noClobber?: boolean | undefined;
  /** Binary data: refused on a terminal. */
  readonly binary?: boolean | undefined;
}

/** True when the output path already exists (so a no-clobber write would be refused). */
export function outputExists(path: string): boolean {
  if (path === STDIO) return false;
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function exists(path: string): CliError {
  return new CliError(
    'CLI_OUTPUT_EXISTS',
    `${path} exists; nothing was written (pass --force to replace it)`,
    EXIT_USAGE,
  );
}

function unwritable(path: string, err: unknown): CliError {
  return new CliError('CLI_FILE_UNWRITABLE', `${path}: ${ioReason(err)}`, EXIT_USAGE, { cause: err });
}

function once_(data: Uint8Array): AsyncIterable<Uint8Array> {
  return (async function* () {
    yield await Promise.resolve(data);
  })();
}

async function writeChunks(fh: FileHandle, chunks: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const chunk of chunks) {
    await fh.write(chunk);
    n += chunk.length;
  }
  return n;
}

/**
 * Writes `chunks` to `dest` atomically: into a new temporary file beside it, flushed, then renamed over `dest`
 * (or hard-linked to it for no-clobber, which fails if `dest` appeared meanwhile). If anything throws — the
 * source included — the temporary file is removed and `dest` is untouched (S154).
 */
async function atomicWrite(
  dest: string,
  chunks: AsyncIterable<Uint8Array>,
  options: OutputOptions,
): Promise<number> {
  if (options.noClobber === true && outputExists(dest)) throw exists(dest);
  const dir = dirname(resolve(dest));
  const tmp = join(dir, `.${basename(dest)}.${randomBytes(6).toString('hex')}.tmp`);
  let fh: FileHandle;
  try {
    fh = await open(tmp, 'wx', options.mode ?? 0o666);
  } catch (err) {
    throw unwritable(dest, err);
  }
  pending.add(tmp);
  try {
    if (options.mode !== undefined) await fh.chmod(options.mode);
    const n = await writeChunks(fh, chunks);
    await fh.sync();
    await fh.close();
    if (options.noClobber === true) {
      try {
        await link(tmp, dest);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'EEXIST') throw exists(dest);
        throw unwritable(dest, err);
      }
      await rm(tmp, { force: true });
    } else {
      await rename(tmp, dest).catch((err: unknown) => {
        throw unwritable(dest, err);
      });
    }
    return n;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  } finally {
    pending.delete(tmp);
  }
}

async function toStdout(chunks: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const chunk of chunks) {
    n += chunk.length;
    if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
  }
  return n;
}

function refuseTerminal(options: OutputOptions): void {
  if (options.binary === true && process.stdout.isTTY === true) {
    throw new CliError('CLI_USAGE', 'refusing to write binary data to a terminal: use -o FILE or a pipe');
  }
}

/**
 * Writes whole data to a file (atomically) or to standard output (`-`).
 * @returns the number of bytes written.
 * @throws {@link CliError} `CLI_OUTPUT_EXISTS`, `CLI_FILE_UNWRITABLE`, `CLI_USAGE` (binary to a terminal).
 */
export async function writeOutput(
  dest: string,
  data: Uint8Array | string,
  options: OutputOptions = {},
): Promise<number> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (dest === STDIO) {
    refuseTerminal(options);
    return toStdout(once_(bytes));
  }
  return atomicWrite(dest, once_(bytes), options);
}

/**
 * Writes a stream whose last chunk may still fail (a decrypting package stream) so that nothing of it is left
 * anywhere unless the stream completes: to a file atomically, to standard output only after staging it in a
 * private temporary file (mode 0600) that is removed afterwards.
 */
export async function writeVerifiedStream(
  dest: string,
  chunks: AsyncIterable<Uint8Array>,
  options: OutputOptions = {},
): Promise<number> {
  if (dest !== STDIO) return atomicWrite(dest, chunks, options);
  refuseTerminal(options);
  const dir = await mkdtemp(join(tmpdir(), 'oapp-'));
  pending.add(dir);
  try {
    const staged = join(dir, 'staged');
    await atomicWrite(staged, chunks, { mode: 0o600 });
    return await toStdout(fileChunks(staged));
  } finally {
    await rm(dir, { recursive: true, force: true });
    pending.delete(dir);
  }
}

/**
 * Creates a package and writes it to `dest`. The one place packages are written (switch point for a streaming
 * writer: same options, content from a stream).
 * @returns the package size in bytes.
 * @throws what `createPackage` throws; {@link CliError} for the output.
 */
export async function writePackage(dest: string, options: CreatePackageOptions): Promise<number> {
  const bytes = createPackage(options);
  return writeOutput(dest, bytes, { binary: true });
}

/**
 * Verifies and decrypts the package `input` into `dest` with bounded memory (`openPackageStream`): the output
 * appears only when the whole package, last chunk and hashes included, has been proven (S154).
 * @throws what `openPackageStream` and its chunks throw; {@link CliError} for the output.
 */
export async function openPackageTo(
  input: Input,
  options: OpenPackageOptions,
  dest: string,
  output: OutputOptions,
): Promise<{ verified: VerifiedPackage; bytes: number }> {
  const progress = progressFor('decrypting', input.size);
  try {
    const { chunks, ...verified } = await openPackageStream(counted(input.open(), progress), options);
    try {
      const bytes = await writeVerifiedStream(dest, chunks, output);
      return { verified, bytes };
    } finally {
      // Closes the reader (and wipes the payload key) if writing stopped before the last chunk.
      await chunks.return();
    }
  } finally {
    progress.done();
  }
}

/**
 * Endorses and repackages `input` (oapp-format `repackage`, in memory like POST /package-envelope) into `dest`.
 * @returns the new package size in bytes.
 */
export async function repackageTo(input: Input, options: RepackageOptions, dest: string): Promise<number> {
  const parts: Uint8Array[] = [];
  for await (const chunk of input.open()) parts.push(chunk);
  const pkg = await repackage(Buffer.concat(parts), options);
  return writeOutput(dest, pkg, { binary: true });
}
