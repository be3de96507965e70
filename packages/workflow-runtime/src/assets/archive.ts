import type { FileHandle } from 'node:fs/promises';
import { Transform, type Duplex, type Readable, type TransformCallback } from 'node:stream';
import { crc32, createInflateRaw, inflateRaw } from 'node:zlib';
import { contentType } from 'mime-types';
import {
  fromRandomAccessReaderPromise,
  parseExtraFields,
  RandomAccessReader,
  type Entry,
  type LocalFileHeader,
  type ZipFile,
} from 'yauzl';
import { AgentError } from '../errors.js';
import { RangeStream } from './range-stream.js';
import {
  checkDescriptor,
  entryProblem,
  hasDescriptor,
  isDirectory,
  layoutProblem,
  localHeaderProblem,
  nameProblem,
  type AssetLimits,
  type EntrySpan,
  type LocalRecord,
} from './zip-checks.js';

/** One servable file of a packaged asset zip, with its response headers computed once. */
export interface AssetEntry {
  readonly name: string;
  /** Uncompressed size: the `Content-Length`. */
  readonly size: number;
  /** Strong validator: `"<crc32 hex>-<size hex>"`. */
  readonly etag: string;
  /** From the name's extension; `application/octet-stream` when unknown. */
  readonly contentType: string;
  readonly method: number;
  readonly dataStart: number;
  readonly compressedSize: number;
  readonly crc32: number;
}

/** An entry this small (compressed and uncompressed) is read with one positional read, as one stream chunk. */
export const SMALL_ENTRY_BYTES = 64 * 1024;

/** A validated zip, open for the runtime's lifetime (one file handle). */
export interface AssetArchive {
  /** The file entry of this exact name (directories are not entries). */
  get(name: string): AssetEntry | undefined;
  readonly size: number;
  /**
   * The entry's bytes: a Buffer for a small entry, else a stream (memory bounded by the stream's buffers).
   * Either is exactly `entry.size` bytes, or the read fails (a stream errors mid-way).
   */
  read(entry: AssetEntry): Promise<Buffer | Readable>;
  readonly closed: boolean;
  /** Ends the streams still open (they fail) and closes the file handle once reads in flight are done. */
  close(): Promise<void>;
}

/**
 * yauzl reads the zip through the runtime's own handle (opened with O_NOFOLLOW, closed by the runtime). Open
 * range streams are tracked so that closing the archive ends them.
 */
class HandleReader extends RandomAccessReader {
  readonly streams = new Set<RangeStream>();
  constructor(private readonly handle: FileHandle) {
    super();
  }
  override _readStreamForRange(start: number, end: number): Readable {
    return this.range(start, end);
  }
  /** `[start, end)` of the file as a tracked stream. */
  range(start: number, end: number): RangeStream {
    const stream = new RangeStream(this.handle, start, end);
    this.streams.add(stream);
    stream.once('close', () => this.streams.delete(stream));
    return stream;
  }
  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null) => void,
  ): void {
    this.handle.read(buffer, offset, length, position).then(
      ({ bytesRead }) => callback(bytesRead === length ? null : new Error('unexpected end of file')),
      (err: Error) => callback(err),
    );
  }
}

/** What a zip problem is reported against: `deployment "d", server "s", zip "<path>"`. */
export type ArchiveLabel = string;

/** A short excerpt of text from the zip, control characters escaped. */
const excerpt = (text: string, max: number) => JSON.stringify(text.slice(0, max)).slice(1, -1);

function invalid(label: ArchiveLabel, reason: string, entry?: string): AgentError {
  const where = entry === undefined ? '' : `entry "${excerpt(entry, 200)}": `;
  return new AgentError('AGENT_ASSET_INVALID', `${label} is refused: ${where}${reason}`);
}

function readCentralDirectory(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const out: Entry[] = [];
    zip.on('entry', (e: Entry) => {
      out.push(e);
      zip.readEntry();
    });
    zip.once('end', () => resolve(out));
    zip.once('error', reject);
    zip.readEntry();
  });
}

const ZIP64_EXTRA = 0x0001;

/** The local header's values, with zip64 sizes taken from its zip64 extra field. */
function localRecordOf(h: LocalFileHeader): { record: LocalRecord; zip64: boolean } {
  const zip64 = parseExtraFields(h.extraField).find((f) => f.id === ZIP64_EXTRA);
  let { compressedSize, uncompressedSize } = h;
  if (zip64 !== undefined) {
    // APPNOTE 4.5.3: in a local header the zip64 field holds the original, then the compressed size.
    let at = 0;
    const next = () => (zip64.data.length >= at + 8 ? Number(zip64.data.readBigUInt64LE((at += 8) - 8)) : -1);
    if (uncompressedSize === 0xffffffff) uncompressedSize = next();
    if (compressedSize === 0xffffffff) compressedSize = next();
  }
  return { record: { ...h, compressedSize, uncompressedSize }, zip64: zip64 !== undefined };
}

async function descriptorLength(handle: FileHandle, e: Entry, l: LocalRecord, zip64: boolean) {
  if (!hasDescriptor(l)) return 0;
  const bytes = Buffer.alloc(24);
  const { bytesRead } = await handle.read(bytes, 0, 24, l.fileDataStart + e.compressedSize);
  return checkDescriptor(e, bytes.subarray(0, bytesRead), zip64);
}

/** Local header, descriptor and span of one entry (S142). */
async function checkLocal(zip: ZipFile, handle: FileHandle, e: Entry, label: ArchiveLabel) {
  const { record, zip64 } = localRecordOf(await zip.readLocalFileHeaderPromise(e));
  const problem = localHeaderProblem(e, record);
  if (problem !== undefined) throw invalid(label, problem, e.fileName);
  const descriptor = await descriptorLength(handle, e, record, zip64);
  if (typeof descriptor === 'string') throw invalid(label, descriptor, e.fileName);
  const end = record.fileDataStart + e.compressedSize + descriptor;
  return { record, span: { name: e.fileName, start: e.relativeOffsetOfLocalHeader, end } };
}

function lowLevelStream(zip: ZipFile, entry: AssetEntry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const size = entry.compressedSize;
    zip.openReadStreamLowLevel(
      entry.dataStart,
      size,
      0,
      size,
      entry.method === 8,
      entry.size,
      (err, stream) => (err ? reject(err) : resolve(stream)),
    );
  });
}

/** Inflates (or reads) the whole entry once, streamed: its size (checked by yauzl) and CRC-32 must match. */
async function checkContent(zip: ZipFile, entry: AssetEntry): Promise<string | undefined> {
  let crc = 0;
  try {
    for await (const chunk of await lowLevelStream(zip, entry)) crc = crc32(chunk as Buffer, crc);
  } catch (err) {
    return `the data cannot be read (${err instanceof Error ? excerpt(err.message, 200) : 'error'})`;
  }
  return crc === entry.crc32 ? undefined : 'the data does not match its CRC-32';
}

function assetEntryOf(e: Entry, l: LocalRecord): AssetEntry {
  const type = contentType(e.fileName.slice(e.fileName.lastIndexOf('/') + 1));
  return {
    name: e.fileName,
    size: e.uncompressedSize,
    etag: `"${e.crc32.toString(16).padStart(8, '0')}-${e.uncompressedSize.toString(16)}"`,
    contentType: type === false ? 'application/octet-stream' : type,
    method: e.compressionMethod,
    dataStart: l.fileDataStart,
    compressedSize: e.compressedSize,
    crc32: e.crc32,
  };
}

/** Central directory rules that need no read: count, names, duplicates, per-entry and total limits. */
function checkCentral(entries: readonly Entry[], limits: AssetLimits, label: ArchiveLabel): void {
  const names = new Set<string>();
  let total = 0;
  for (const e of entries) {
    const problem = nameProblem(e.fileName) ?? entryProblem(e, limits);
    if (problem !== undefined) throw invalid(label, problem, e.fileName);
    if (names.has(e.fileName)) throw invalid(label, 'the name appears twice', e.fileName);
    names.add(e.fileName);
    total += e.uncompressedSize;
  }
  if (total > limits.maxTotalBytes)
    throw invalid(
      label,
      `the entries hold ${total} bytes uncompressed, over the limit of ${limits.maxTotalBytes}`,
    );
}

async function validate(zip: ZipFile, handle: FileHandle, limits: AssetLimits, label: ArchiveLabel) {
  if (zip.entryCount > limits.maxEntries)
    throw invalid(label, `${zip.entryCount} entries, over the limit of ${limits.maxEntries}`);
  // yauzl's cursor stands at the central directory until the first entry is read.
  const centralStart = zip.readEntryCursor as unknown as number;
  const entries = await readCentralDirectory(zip);
  checkCentral(entries, limits, label);
  const spans: EntrySpan[] = [];
  const files = new Map<string, AssetEntry>();
  for (const e of entries) {
    const { record, span } = await checkLocal(zip, handle, e, label);
    spans.push(span);
    if (!isDirectory(e.fileName)) files.set(e.fileName, assetEntryOf(e, record));
  }
  const layout = layoutProblem(spans, centralStart);
  if (layout !== undefined) throw invalid(label, layout);
  for (const entry of files.values()) {
    const problem = await checkContent(zip, entry);
    if (problem !== undefined) throw invalid(label, problem, entry.name);
  }
  return files;
}

/** Passes exactly `size` bytes: more, or fewer at the end, is an error (the zip changed under the server). */
class ExactSize extends Transform {
  #seen = 0;
  constructor(private readonly size: number) {
    super();
  }
  override _transform(chunk: Buffer, _: BufferEncoding, callback: TransformCallback): void {
    this.#seen += chunk.length;
    callback(this.#seen > this.size ? new Error('the entry inflates past its size') : null, chunk);
  }
  override _flush(callback: TransformCallback): void {
    callback(this.#seen < this.size ? new Error('the entry ends before its size') : null);
  }
}

/**
 * A large entry as a stream: its compressed range (tracked, so closing the archive ends it), inflated when
 * deflated, with its size enforced. Memory is bounded by the streams' buffers (64 KiB chunks).
 */
function entryStream(reader: HandleReader, entry: AssetEntry): Readable {
  const raw = reader.range(entry.dataStart, entry.dataStart + entry.compressedSize);
  if (entry.method === 0) return raw; // a short file is an error of the range stream itself
  return chain(raw, createInflateRaw({ chunkSize: 64 * 1024 }), new ExactSize(entry.size));
}

/**
 * Pipes the stages and returns the last: an error in any stage destroys the last with it, and closing the last
 * (done, failed, or a client that went away) destroys the others. Not `stream.pipeline`, which creates an
 * AbortController and a DOMException per call: measurable at thousands of responses a second.
 */
function chain(first: Readable, ...rest: Duplex[]): Readable {
  const stages: Readable[] = [first, ...rest];
  const last = stages.at(-1)!;
  stages.slice(0, -1).forEach((stage, i) => {
    stage.pipe(rest[i]!);
    stage.once('error', (err) => last.destroy(err));
  });
  last.once('close', () => {
    for (const stage of stages) if (!stage.destroyed) stage.destroy();
  });
  return last;
}

function inflateSmall(compressed: Buffer, size: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    inflateRaw(compressed, { maxOutputLength: Math.max(size, 1) }, (err, out) =>
      err ? reject(err) : resolve(out),
    ),
  );
}

/**
 * Opens a zip for serving: yauzl reads the central directory; every entry's name (S139), limits (S140), local
 * header and descriptor (S142) are checked, entries may not share bytes, and every file entry is read once
 * (streamed) to check its size and CRC-32. The handle is closed when validation fails.
 * @throws {@link AgentError} `AGENT_ASSET_INVALID` naming `label` and the reason.
 */
export async function openAssetArchive(
  handle: FileHandle,
  size: number,
  limits: AssetLimits,
  label: ArchiveLabel,
): Promise<AssetArchive> {
  let zip: ZipFile;
  let files: Map<string, AssetEntry>;
  const reader = new HandleReader(handle);
  try {
    zip = await fromRandomAccessReaderPromise(reader, size, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: true,
      strictFileNames: true,
      validateEntrySizes: true,
    });
    files = await validate(zip, handle, limits, label);
  } catch (err) {
    await handle.close();
    if (err instanceof AgentError) throw err;
    throw invalid(label, err instanceof Error ? excerpt(err.message, 300) : 'not a zip file');
  }
  let closed = false;
  return {
    size,
    get: (name) => files.get(name),
    get closed() {
      return closed;
    },
    async read(entry) {
      if (entry.size > SMALL_ENTRY_BYTES || entry.compressedSize > SMALL_ENTRY_BYTES)
        return entryStream(reader, entry);
      const raw = Buffer.allocUnsafe(entry.compressedSize);
      const { bytesRead } = await handle.read(raw, 0, raw.length, entry.dataStart);
      if (bytesRead !== raw.length) throw new Error('unexpected end of file');
      const body = entry.method === 0 ? raw : await inflateSmall(raw, entry.size);
      if (body.length !== entry.size) throw new Error('the entry has another size than declared');
      return body;
    },
    async close() {
      if (closed) return;
      closed = true;
      zip.close();
      for (const stream of reader.streams) stream.destroy(new Error('the asset archive was closed'));
      await handle.close(); // waits for reads in flight
    },
  };
}
