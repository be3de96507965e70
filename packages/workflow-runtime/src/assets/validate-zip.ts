import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { contentType } from 'mime-types';
import { parseExtraFields, type Entry, type LocalFileHeader, type ZipFile } from 'yauzl';
import { AgentError } from '../errors.js';
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

/** What a zip problem is reported against: `deployment "d", server "s", zip "<path>"`. */
export type ArchiveLabel = string;

/** A short excerpt of text from the zip, control characters escaped. */
export const excerpt = (text: string, max: number) => JSON.stringify(text.slice(0, max)).slice(1, -1);

export function invalid(label: ArchiveLabel, reason: string, entry?: string): AgentError {
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

export function lowLevelStream(zip: ZipFile, entry: AssetEntry): Promise<Readable> {
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

/**
 * Every rule of a packaged asset zip, in order: entry count, names (S139), per-entry and total limits (S140),
 * duplicates, local headers and descriptors (S142), entries sharing bytes, and each file's content (size and
 * CRC-32, read once, streamed). Returns the file entries by name.
 * @throws {@link AgentError} `AGENT_ASSET_INVALID` naming `label`, the entry and the rule.
 */
export async function validateZip(
  zip: ZipFile,
  handle: FileHandle,
  limits: AssetLimits,
  label: ArchiveLabel,
): Promise<Map<string, AssetEntry>> {
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
