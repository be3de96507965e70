import { randomBytes } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { link, mkdtemp, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type {
  ContentSource,
  CreatePackageOptions,
  OpenPackageOptions,
  RepackageOptions,
  VerifiedPackage,
} from '@org/oapp-format';
import { pending } from './cleanup.js';
import { CliError, EXIT_USAGE } from './errors.js';
import { counted, progressFor } from './progress.js';

// Every byte the command line reads or writes goes through this module: small inputs whole, packages as
// streams, outputs atomically (a temporary file in the target's directory, renamed into place when complete).
// Packages are written and opened with oapp-format's streaming functions (`writePackage` into a file,
// `createPackageStream` to standard output, `openPackageToSink`), so memory stays bounded by the chunk size.

/** The operand that means standard input or standard output. */
export const STDIO = '-';

/**
 * The package format's writers and readers, loaded by the functions that package, open or repackage: commands
 * that only read inputs or write outputs (`test`, `keygen`, `compile`, …) do not load the format and its crypto
 * before they start (ADR 0148, 0149).
 */
const packageFormat = () => import('@org/oapp-format');
const MiB = 1024 * 1024;
/** Read size for package streams. */
const READ_CHUNK = MiB;

function unreadable(path: string, why: string, cause?: unknown): CliError {
  return new CliError('CLI_FILE_UNREADABLE', `${path}: ${why}`, EXIT_USAGE, { cause });
}

function errnoOf(err: unknown): unknown {
  return (err as { code?: unknown }).code;
}

/** A short reason for a failed file operation: `no such file`, `permission denied`, or the errno code. */
export function ioReason(err: unknown): string {
  const code = errnoOf(err);
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
 * Opens a package (or package content) input for streaming. A regular file is read in place; standard input and
 * anything else that cannot be read twice (a pipe, a device) is first copied to a private temporary file
 * (mode 0600, in a fresh 0700 directory, removed by `dispose` or when the process ends) so it can be read again
 * and its exact size is known.
 * @throws {@link CliError} `CLI_FILE_UNREADABLE`.
 */
export async function packageInput(path: string): Promise<Input> {
  if (path !== STDIO) {
    const size = await sizeOf(path);
    if (isRegularFile(path))
      return { name: path, size, open: () => fileChunks(path), dispose: () => Promise.resolve() };
  }
  const name = path === STDIO ? 'standard input' : path;
  const source = path === STDIO ? chunksOf(process.stdin) : fileChunks(path);
  const dir = await mkdtemp(join(tmpdir(), 'oapp-'));
  pending.add(dir);
  const dispose = async () => {
    await rm(dir, { recursive: true, force: true });
    pending.delete(dir);
  };
  const spool = join(dir, 'spool');
  let size = 0;
  try {
    const fh = await open(spool, 'wx', 0o600);
    try {
      for await (const chunk of source) {
        size += chunk.length;
        await fh.write(chunk);
      }
    } finally {
      await fh.close();
    }
  } catch (err) {
    await dispose();
    if (err instanceof CliError) throw err;
    throw unreadable(name, ioReason(err), err);
  }
  return { name, size, open: () => fileChunks(spool), dispose };
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whole bytes already in memory as an {@link Input} (a compiled workflow). */
export function memoryInput(name: string, bytes: Uint8Array): Input {
  return {
    name,
    size: bytes.length,
    open: () => once_(bytes),
    dispose: () => Promise.resolve(),
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

/** `CLI_OUTPUT_EXISTS` for `path` (S152). */
export function outputExistsError(path: string): CliError {
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

/** Fills an open temporary file; returns the number of bytes of the finished output. */
type Filler = (fh: FileHandle) => Promise<number>;

/** A finished temporary file beside its target, not yet moved into place. */
interface Staged {
  readonly dest: string;
  readonly tmp: string;
  readonly bytes: number;
  readonly noClobber: boolean;
}

/**
 * Writes a new temporary file beside `dest` with `fill`, flushed and closed. If anything throws — the source
 * included — the temporary file is removed.
 */
async function stage(dest: string, fill: Filler, options: OutputOptions): Promise<Staged> {
  const noClobber = options.noClobber === true;
  if (noClobber && outputExists(dest)) throw outputExistsError(dest);
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
    const bytes = await fill(fh);
    await fh.sync();
    await fh.close();
    return { dest, tmp, bytes, noClobber };
  } catch (err) {
    await fh.close().catch(() => undefined);
    await discard(tmp);
    throw err;
  }
}

async function discard(tmp: string): Promise<void> {
  await rm(tmp, { force: true });
  pending.delete(tmp);
}

/**
 * Moves a staged file into place: renamed over `dest`, or hard-linked to it for no-clobber (which fails if
 * `dest` appeared meanwhile). The temporary file is gone afterwards either way.
 */
async function commit(s: Staged): Promise<void> {
  try {
    if (s.noClobber) {
      await link(s.tmp, s.dest).catch((err: unknown) => {
        throw errnoOf(err) === 'EEXIST' ? outputExistsError(s.dest) : unwritable(s.dest, err);
      });
    } else {
      await rename(s.tmp, s.dest).catch((err: unknown) => {
        throw unwritable(s.dest, err);
      });
    }
  } finally {
    await discard(s.tmp);
  }
}

/**
 * Writes `dest` atomically: `fill` writes a new temporary file beside it, which is flushed, then renamed over
 * `dest` (or hard-linked to it for no-clobber). If anything throws the temporary file is removed and `dest` is
 * untouched (S154).
 */
async function atomicFile(dest: string, fill: Filler, options: OutputOptions): Promise<number> {
  const staged = await stage(dest, fill, options);
  await commit(staged);
  return staged.bytes;
}

/** One file of {@link writeFiles}. */
export interface OutputFile {
  readonly path: string;
  readonly data: Uint8Array | string;
  readonly options: OutputOptions;
}

/**
 * Writes several files as a set (a key pair): every file is first staged in a temporary file beside its target,
 * and only when all are staged are they moved into place. If a move fails, the files already moved that did not
 * exist before (no-clobber) are removed again, so a failure leaves neither half of the set behind; an
 * interruption meanwhile removes them too. Files replaced with no-clobber off cannot be restored.
 * @throws {@link CliError} `CLI_OUTPUT_EXISTS`, `CLI_FILE_UNWRITABLE`.
 */
export async function writeFiles(files: readonly OutputFile[]): Promise<void> {
  const staged: Staged[] = [];
  try {
    for (const f of files) {
      const bytes = typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : f.data;
      staged.push(await stage(f.path, (fh) => writeChunks(fh, once_(bytes)), f.options));
    }
  } catch (err) {
    for (const s of staged) await discard(s.tmp);
    throw err;
  }
  const created: string[] = [];
  let next = 0;
  try {
    for (; next < staged.length; next++) {
      const s = staged[next]!;
      await commit(s);
      if (s.noClobber) {
        created.push(s.dest);
        pending.add(s.dest);
      }
    }
  } catch (err) {
    // commit() removed the failed one's temporary file; the ones after it were never moved.
    for (const s of staged.slice(next + 1)) await discard(s.tmp);
    for (const dest of created) await rm(dest, { force: true });
    throw err;
  } finally {
    for (const dest of created) pending.delete(dest);
  }
}

/** {@link atomicFile} of a stream of chunks. */
function atomicWrite(
  dest: string,
  chunks: AsyncIterable<Uint8Array>,
  options: OutputOptions,
): Promise<number> {
  return atomicFile(dest, (fh) => writeChunks(fh, chunks), options);
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
 * Writes output that is valid only if `fill` completes (a decrypting package stream) so that nothing of it is
 * left anywhere unless it does: to a file atomically, to standard output only after staging it in a private
 * temporary file (mode 0600) that is removed afterwards.
 */
async function writeStaged(dest: string, fill: Filler, options: OutputOptions): Promise<number> {
  if (dest !== STDIO) return atomicFile(dest, fill, options);
  refuseTerminal(options);
  const dir = await mkdtemp(join(tmpdir(), 'oapp-'));
  pending.add(dir);
  try {
    const staged = join(dir, 'staged');
    await atomicFile(staged, fill, { mode: 0o600 });
    return await toStdout(fileChunks(staged));
  } finally {
    await rm(dir, { recursive: true, force: true });
    pending.delete(dir);
  }
}

/** Sequential writes are gathered into writes of this size: one thread-pool round trip per MiB, not per chunk. */
const WRITE_BATCH = MiB;

/**
 * Gathers writes that continue one another into {@link WRITE_BATCH}-byte writes through `write` (the packages' 64 KiB
 * chunks each cost a thread-pool round trip otherwise: issue 31). A write elsewhere first writes what is gathered.
 * `flush` writes the rest; `wipe` clears the batch (it may hold plaintext), done or failed.
 */
function batched(write: (bytes: Uint8Array, position: number) => Promise<void>): {
  write(bytes: Uint8Array, position: number): Promise<void>;
  flush(): Promise<void>;
  wipe(): void;
} {
  const batch = new Uint8Array(WRITE_BATCH);
  let start = 0;
  let used = 0;
  const flush = async () => {
    if (used > 0) await write(batch.subarray(0, used), start);
    start += used;
    used = 0;
  };
  return {
    async write(bytes, position) {
      if (position !== start + used) {
        await flush();
        start = position;
      }
      if (bytes.length >= WRITE_BATCH) {
        await flush();
        await write(bytes, position);
        start = position + bytes.length;
        return;
      }
      if (used + bytes.length > WRITE_BATCH) await flush();
      batch.set(bytes, used);
      used += bytes.length;
    },
    flush,
    wipe: () => void batch.fill(0),
  };
}

/** Writes all of `bytes` at `position` (a positional write may be short). */
async function writeAt(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let off = 0; off < bytes.length;) {
    const { bytesWritten } = await fh.write(bytes, off, bytes.length - off, position + off);
    off += bytesWritten;
  }
}

/**
 * Creates a package of `content` and writes it to `dest` with bounded memory. To a file: oapp-format's
 * one-pass `writePackage` into a temporary file (payload first, then the prefix at offset 0), renamed into
 * place only when complete. To standard output (`-`): `createPackageStream`, which reads the content twice
 * (hence an {@link Input}, re-readable) and emits the package in order; if it fails midway (the content changed
 * between the reads, a read error) the command fails and what was written is not a package.
 * A progress bar is shown for large content (stderr a terminal, content ≥ 64 MiB).
 * @returns the package size in bytes.
 * @throws what `writePackage`/`createPackageStream` throw; {@link CliError} for the input and the output.
 */
export async function writePackage(
  dest: string,
  options: Omit<CreatePackageOptions, 'content'>,
  content: Input,
): Promise<number> {
  const passes = dest === STDIO ? 2 : 1;
  const progress = progressFor('packaging', content.size * passes);
  const read = (): ContentSource => counted(content.open(), progress);
  const { createPackageStream, writePackage: writePackageToSink } = await packageFormat();
  try {
    if (dest === STDIO) {
      refuseTerminal({ binary: true });
      return await toStdout(createPackageStream({ ...options, content: read }));
    }
    return await atomicFile(
      dest,
      async (fh) => {
        const sink = batched((bytes, position) => writeAt(fh, bytes, position));
        try {
          const written = await writePackageToSink(
            { ...options, content: read(), contentSize: content.size },
            sink,
          );
          await sink.flush();
          return written.length;
        } finally {
          sink.wipe();
        }
      },
      {},
    );
  } finally {
    progress.done();
  }
}

/**
 * Verifies and decrypts the package `input` into `dest` with bounded memory (`openPackageToSink`): the sink is
 * a temporary file (beside `dest`, or a private staging file for standard output) that becomes the output only
 * when `openPackageToSink` has resolved, i.e. the whole package, last chunk and hashes included, has been
 * proven (S154).
 * @throws what `openPackageToSink` throws; {@link CliError} for the output.
 */
export async function openPackageTo(
  input: Input,
  options: OpenPackageOptions,
  dest: string,
  output: OutputOptions,
): Promise<{ verified: VerifiedPackage; bytes: number }> {
  const { openPackageToSink } = await packageFormat();
  const progress = progressFor('decrypting', input.size);
  try {
    let verified: VerifiedPackage | undefined;
    const bytes = await writeStaged(
      dest,
      async (fh) => {
        let n = 0;
        const sink = batched((bytes, position) => writeAt(fh, bytes, position));
        try {
          verified = await openPackageToSink(counted(input.open(), progress), options, async (chunk) => {
            await sink.write(chunk, n);
            n += chunk.length;
          });
          await sink.flush();
        } finally {
          sink.wipe();
        }
        return n;
      },
      output,
    );
    if (verified === undefined) throw new Error('internal error: the package was not verified');
    return { verified, bytes };
  } finally {
    progress.done();
  }
}

/**
 * The largest package `envelope` takes: oapp-format has no streaming `repackage`, so the package, its content and
 * the new package are all in memory at once (about three times this at the peak).
 */
export const ENVELOPE_MAX_BYTES = 1024 * MiB;

/**
 * Endorses and repackages `input` (oapp-format `repackage`, in memory like POST /package-envelope) into `dest`.
 * @returns the new package size in bytes.
 * @throws {@link CliError} `CLI_FILE_UNREADABLE` for a package over {@link ENVELOPE_MAX_BYTES}.
 */
export async function repackageTo(input: Input, options: RepackageOptions, dest: string): Promise<number> {
  if (input.size > ENVELOPE_MAX_BYTES)
    throw unreadable(input.name, `larger than ${ENVELOPE_MAX_BYTES} bytes`);
  const parts: Uint8Array[] = [];
  for await (const chunk of input.open()) parts.push(chunk);
  const { repackage } = await packageFormat();
  const pkg = await repackage(Buffer.concat(parts), options);
  return writeOutput(dest, pkg, { binary: true });
}
