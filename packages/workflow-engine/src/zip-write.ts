/**
 * `bytes().zip` (SPEC.md §7.1.2, ADR 0075): writes a plain zip archive (APPNOTE 6.3.10) that the reader in
 * `zip-read.ts` and common tools accept. Deterministic: entries in the order given, deflate (level 6) unless
 * storing is smaller, UTF-8 names (flag 11), the DOS timestamp 1980-01-01 00:00, no extra fields, no comment.
 */
import { crc32, deflateRawSync } from 'node:zlib';
import { MAX_ZIP_ENTRIES, invalid, isSafeEntryName, nameExcerpt } from './compress.js';
import { EngineError } from './errors.js';
import type { ZipEntry } from './zip-read.js';

const FLAG_UTF8 = 0x0800,
  VERSION = 20,
  DOS_DATE_1980 = 0x0021;
const MAX_U32 = 0xffffffff;

interface Prepared {
  name: Uint8Array;
  crc: number;
  method: number;
  data: Uint8Array;
  usize: number;
  offset: number;
}

function prepare(e: ZipEntry, index: number, seen: Set<string>): Omit<Prepared, 'offset'> {
  const name = Buffer.from(e.name, 'utf8');
  if (!e.name.isWellFormed() || !isSafeEntryName(e.name, name.length, false))
    throw invalid(`zip: entry ${index} has an unsafe name ${nameExcerpt(e.name)}`);
  if (seen.has(e.name)) throw invalid(`zip: entry ${index} repeats the name ${nameExcerpt(e.name)}`);
  seen.add(e.name);
  const deflated = deflateRawSync(e.bytes, { level: 6 });
  const stored = deflated.length >= e.bytes.length;
  return {
    name,
    crc: crc32(e.bytes),
    method: stored ? 0 : 8,
    data: stored ? e.bytes : deflated,
    usize: e.bytes.length,
  };
}

/** The fields local header and central entry share (from "version needed" to the extra field length). */
function common(v: DataView, at: number, p: Prepared): void {
  v.setUint16(at, VERSION, true);
  v.setUint16(at + 2, FLAG_UTF8, true);
  v.setUint16(at + 4, p.method, true);
  v.setUint16(at + 6, 0, true); // time 00:00:00
  v.setUint16(at + 8, DOS_DATE_1980, true);
  v.setUint32(at + 10, p.crc, true);
  v.setUint32(at + 14, p.data.length, true);
  v.setUint32(at + 18, p.usize, true);
  v.setUint16(at + 22, p.name.length, true);
  v.setUint16(at + 24, 0, true);
}

function localHeader(p: Prepared): Uint8Array {
  const out = new Uint8Array(30 + p.name.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, 0x04034b50, true);
  common(v, 4, p);
  out.set(p.name, 30);
  return out;
}

function centralEntry(p: Prepared): Uint8Array {
  const out = new Uint8Array(46 + p.name.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, 0x02014b50, true);
  v.setUint16(4, VERSION, true); // made by: MS-DOS, 2.0 (no Unix permissions recorded)
  common(v, 6, p);
  // comment length, disk number, internal and external attributes: all 0
  v.setUint32(42, p.offset, true);
  out.set(p.name, 46);
  return out;
}

function endRecord(count: number, cdSize: number, cdOffset: number): Uint8Array {
  const out = new Uint8Array(22);
  const v = new DataView(out.buffer);
  v.setUint32(0, 0x06054b50, true);
  v.setUint16(8, count, true);
  v.setUint16(10, count, true);
  v.setUint32(12, cdSize, true);
  v.setUint32(16, cdOffset, true);
  return out;
}

/**
 * A zip archive of `entries`.
 * @throws EngineError `ENGINE_COMPRESSION_INVALID` for an unsafe or repeated name (the reader's rule, S139);
 *   `ENGINE_COMPRESSION_LIMIT` for more than {@link MAX_ZIP_ENTRIES} entries or an archive past 4 GiB (ZIP64 is
 *   not written).
 */
export function zipArchive(entries: readonly ZipEntry[]): Uint8Array {
  if (entries.length > MAX_ZIP_ENTRIES)
    throw new EngineError('ENGINE_COMPRESSION_LIMIT', `zip: more than ${MAX_ZIP_ENTRIES} entries`);
  const seen = new Set<string>();
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  entries.forEach((e, i) => {
    const p: Prepared = { ...prepare(e, i, seen), offset };
    const header = localHeader(p);
    parts.push(header, p.data);
    central.push(centralEntry(p));
    offset += header.length + p.data.length;
  });
  const cdSize = central.reduce((n, c) => n + c.length, 0);
  if (offset + cdSize > MAX_U32)
    throw new EngineError('ENGINE_COMPRESSION_LIMIT', 'zip: the archive would be larger than 4 GiB');
  return Buffer.concat([...parts, ...central, endRecord(entries.length, cdSize, offset)]);
}
