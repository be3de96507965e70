/**
 * `bytes().unzip` (SPEC.md §7.1.2, ADR 0075): a strict reader of the zip container (APPNOTE 6.3.10, §4.3) over
 * node:zlib's raw inflate. Untrusted input: every offset and size is checked before it is used, and every rule
 * below refuses the whole archive — the same archive gives the same answer every time (S142).
 *
 * - One end record, ending exactly at the end of the input (its comment reaches the last byte); one disk; no
 *   ZIP64; the central directory ends exactly where the end record begins and holds exactly the entries it says.
 * - Each local header agrees with its central entry: name bytes, flags, method, and CRC-32 and sizes (which may be
 *   0 in the local header only when the data-descriptor flag is set). Entries never overlap (an overlapping-entry
 *   bomb reuses one compressed stream many times).
 * - Names follow `isSafeEntryName` (S139) and are unique; methods are stored (0) and deflate (8); encrypted
 *   entries are refused.
 * - The sum of the declared sizes must fit the cap before anything is inflated; each entry inflates to exactly its
 *   declared size (zlib stops one byte past it), consumes exactly its compressed bytes and matches its CRC-32.
 */
import { crc32, inflateRawSync } from 'node:zlib';
import {
  MAX_ZIP_ENTRIES,
  invalid,
  isSafeEntryName,
  nameExcerpt,
  overCap,
  zlibFailure,
  type InflateInfo,
} from './compress.js';
import { EngineError } from './errors.js';

/** One file of an archive. */
export interface ZipEntry {
  name: string;
  bytes: Uint8Array;
}

const SIG_LOCAL = 0x04034b50,
  SIG_CENTRAL = 0x02014b50,
  SIG_END = 0x06054b50;
const LOCAL_BYTES = 30,
  CENTRAL_BYTES = 46,
  END_BYTES = 22,
  MAX_COMMENT_BYTES = 0xffff;
const FLAG_ENCRYPTED = 0x0001,
  FLAG_DESCRIPTOR = 0x0008,
  FLAG_STRONG_ENCRYPTION = 0x0040;
const STORED = 0,
  DEFLATE = 8;

interface End {
  at: number;
  count: number;
  cdOffset: number;
}

interface Central {
  index: number;
  nameBytes: Uint8Array;
  name: string;
  flags: number;
  method: number;
  crc: number;
  csize: number;
  usize: number;
  offset: number;
}

interface Span {
  header: number;
  start: number;
  end: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function findEnd(data: Uint8Array, v: DataView): End {
  if (data.length < END_BYTES) throw invalid('unzip: not a zip archive (shorter than its end record)');
  const lowest = Math.max(0, data.length - END_BYTES - MAX_COMMENT_BYTES);
  for (let p = data.length - END_BYTES; p >= lowest; p--) {
    if (v.getUint32(p, true) === SIG_END && v.getUint16(p + 20, true) === data.length - p - END_BYTES)
      return parseEnd(v, p);
  }
  throw invalid('unzip: no end of central directory record at the end of the input');
}

function parseEnd(v: DataView, p: number): End {
  const [disk, cdDisk, onDisk, count] = [4, 6, 8, 10].map((o) => v.getUint16(p + o, true));
  const cdSize = v.getUint32(p + 12, true),
    cdOffset = v.getUint32(p + 16, true);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff)
    throw invalid('unzip: ZIP64 archives are not supported');
  if (disk !== 0 || cdDisk !== 0 || onDisk !== count)
    throw invalid('unzip: multi-disk archives are not supported');
  if (count! > MAX_ZIP_ENTRIES)
    throw new EngineError('ENGINE_COMPRESSION_LIMIT', `unzip: more than ${MAX_ZIP_ENTRIES} entries`);
  if (cdOffset + cdSize !== p)
    throw invalid('unzip: the central directory does not end where the end record begins');
  return { at: p, count: count!, cdOffset };
}

function readName(bytes: Uint8Array, index: number): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw invalid(`unzip: the name of entry ${index} is not UTF-8`);
  }
}

function readCentralEntry(data: Uint8Array, v: DataView, pos: number, limit: number, index: number): Central {
  if (pos + CENTRAL_BYTES > limit || v.getUint32(pos, true) !== SIG_CENTRAL)
    throw invalid(`unzip: central directory entry ${index} is malformed`);
  const nlen = v.getUint16(pos + 28, true);
  const nameBytes = data.subarray(pos + CENTRAL_BYTES, pos + CENTRAL_BYTES + nlen);
  const e: Central = {
    index,
    nameBytes,
    name: readName(nameBytes, index),
    flags: v.getUint16(pos + 8, true),
    method: v.getUint16(pos + 10, true),
    crc: v.getUint32(pos + 16, true),
    csize: v.getUint32(pos + 20, true),
    usize: v.getUint32(pos + 24, true),
    offset: v.getUint32(pos + 42, true),
  };
  if (v.getUint16(pos + 34, true) !== 0) throw invalid('unzip: multi-disk archives are not supported');
  if (e.csize === 0xffffffff || e.usize === 0xffffffff || e.offset === 0xffffffff)
    throw invalid('unzip: ZIP64 archives are not supported');
  return e;
}

/** Central directory entry length: fixed part, name, extra field, comment. */
function centralLength(v: DataView, pos: number): number {
  return (
    CENTRAL_BYTES + v.getUint16(pos + 28, true) + v.getUint16(pos + 30, true) + v.getUint16(pos + 32, true)
  );
}

function readCentral(data: Uint8Array, v: DataView, end: End): Central[] {
  const out: Central[] = [];
  let pos = end.cdOffset;
  for (let i = 0; i < end.count; i++) {
    out.push(readCentralEntry(data, v, pos, end.at, i));
    pos += centralLength(v, pos);
    if (pos > end.at) throw invalid(`unzip: central directory entry ${i} is malformed`);
  }
  if (pos !== end.at) throw invalid('unzip: the central directory holds more than its entry count');
  return out;
}

function checkEntry(e: Central, seen: Set<string>): void {
  if (e.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION))
    throw invalid(`unzip: entry ${e.index} is encrypted (not supported)`);
  if (e.method !== STORED && e.method !== DEFLATE)
    throw invalid(`unzip: entry ${e.index} uses compression method ${e.method} (only 0 and 8 are supported)`);
  if (e.method === STORED && e.csize !== e.usize)
    throw invalid(`unzip: stored entry ${e.index} has different compressed and uncompressed sizes`);
  const dir = e.name.endsWith('/');
  if (!isSafeEntryName(e.name, e.nameBytes.length, dir))
    throw invalid(`unzip: entry ${e.index} has an unsafe name ${nameExcerpt(e.name)}`);
  if (dir && e.usize !== 0) throw invalid(`unzip: directory entry ${e.index} has content`);
  if (seen.has(e.name)) throw invalid(`unzip: entry ${e.index} repeats the name ${nameExcerpt(e.name)}`);
  seen.add(e.name);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The local header of `e`, checked against it; returns where the entry's header and data lie. */
function readLocal(data: Uint8Array, v: DataView, e: Central, cdOffset: number): Span {
  const p = e.offset;
  const bad = (what: string): EngineError => invalid(`unzip: the local header of entry ${e.index} ${what}`);
  if (p + LOCAL_BYTES > cdOffset || v.getUint32(p, true) !== SIG_LOCAL) throw bad('is missing or malformed');
  const nlen = v.getUint16(p + 26, true),
    start = p + LOCAL_BYTES + nlen + v.getUint16(p + 28, true);
  if (start > cdOffset || !sameBytes(data.subarray(p + LOCAL_BYTES, p + LOCAL_BYTES + nlen), e.nameBytes))
    throw bad('names a different entry');
  if (v.getUint16(p + 6, true) !== e.flags || v.getUint16(p + 8, true) !== e.method)
    throw bad('disagrees with the central directory (flags or method)');
  const deferred = (e.flags & FLAG_DESCRIPTOR) !== 0;
  const local = [v.getUint32(p + 14, true), v.getUint32(p + 18, true), v.getUint32(p + 22, true)];
  const central = [e.crc, e.csize, e.usize];
  if (local.some((x, i) => x !== central[i] && !(deferred && x === 0)))
    throw bad('disagrees with the central directory (CRC-32 or sizes)');
  if (start + e.csize > cdOffset) throw bad('is followed by less data than its size');
  return { header: p, start, end: start + e.csize };
}

function checkNoOverlap(spans: Span[]): void {
  const sorted = [...spans].sort((a, b) => a.header - b.header);
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]!.header < sorted[i - 1]!.end) throw invalid('unzip: entries overlap');
}

function inflateEntry(data: Uint8Array, e: Central, s: Span): Uint8Array {
  const raw = data.subarray(s.start, s.end);
  let out: Uint8Array;
  if (e.method === STORED)
    out = new Uint8Array(raw); // a copy: `data` is a view of the sandbox's heap
  else {
    let r: InflateInfo;
    try {
      // One byte of room past the declared size is never needed: zlib stops at it, and that is a mismatch.
      r = inflateRawSync(raw, {
        maxOutputLength: Math.max(1, e.usize),
        info: true,
      }) as unknown as InflateInfo;
    } catch (err) {
      const f = zlibFailure(`unzip: entry ${e.index}`, err, e.usize);
      if (f.code === 'ENGINE_COMPRESSION_LIMIT')
        throw invalid(`unzip: entry ${e.index} inflates to more than its declared ${e.usize} bytes`);
      throw f;
    }
    if (r.engine.bytesWritten !== raw.length)
      throw invalid(`unzip: entry ${e.index} has data after the end of its deflate stream`);
    out = r.buffer;
  }
  if (out.length !== e.usize) throw invalid(`unzip: entry ${e.index} is not its declared size`);
  if (crc32(out) !== e.crc) throw invalid(`unzip: entry ${e.index} fails its CRC-32 check`);
  return out;
}

/**
 * The files of a zip archive, in central-directory order; directory entries are checked and left out.
 * @throws EngineError `ENGINE_COMPRESSION_INVALID` for every rule in this file's header;
 *   `ENGINE_COMPRESSION_LIMIT` when the entries declare more than `cap` bytes in all, or there are more than
 *   {@link MAX_ZIP_ENTRIES}.
 */
export function unzipArchive(data: Uint8Array, cap: number): ZipEntry[] {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const end = findEnd(data, v);
  const entries = readCentral(data, v, end);
  const seen = new Set<string>();
  let declared = 0;
  for (const e of entries) {
    checkEntry(e, seen);
    declared += e.usize;
  }
  if (declared > cap) throw overCap('unzip', cap);
  const spans = entries.map((e) => readLocal(data, v, e, end.cdOffset));
  checkNoOverlap(spans);
  const out: ZipEntry[] = [];
  entries.forEach((e, i) => {
    const bytes = inflateEntry(data, e, spans[i]!);
    if (!e.name.endsWith('/')) out.push({ name: e.name, bytes });
  });
  return out;
}
