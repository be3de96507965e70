import { isSafeEntryName } from './names.js';

/** Decompression-bomb limits of one packaged asset zip (S140), checked at start-up on the declared sizes. */
export interface AssetLimits {
  /** Most entries (files and directories) in the central directory. */
  readonly maxEntries: number;
  /** Largest uncompressed size of one entry, in bytes. */
  readonly maxEntryBytes: number;
  /** Largest sum of the entries' uncompressed sizes, in bytes. */
  readonly maxTotalBytes: number;
  /** Highest uncompressed/compressed ratio of an entry larger than {@link AssetLimits.ratioFloorBytes}. */
  readonly maxRatio: number;
  /** Entries up to this uncompressed size are exempt from the ratio limit (they cannot amplify much). */
  readonly ratioFloorBytes: number;
}

const MiB = 1024 * 1024;

/** The documented limits (README "Packaged assets"). */
export const DEFAULT_ASSET_LIMITS: AssetLimits = Object.freeze({
  maxEntries: 10_000,
  maxEntryBytes: 256 * MiB,
  maxTotalBytes: 1024 * MiB,
  maxRatio: 100,
  ratioFloorBytes: 1 * MiB,
});

/** The central directory's record of one entry (yauzl's `Entry`, the fields checked here). */
export interface CentralRecord {
  readonly fileName: string;
  readonly fileNameRaw: Uint8Array;
  readonly generalPurposeBitFlag: number;
  readonly compressionMethod: number;
  readonly crc32: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly relativeOffsetOfLocalHeader: number;
}

/** The local header of one entry (yauzl's `LocalFileHeader`, with zip64 sizes already applied). */
export interface LocalRecord {
  readonly fileName: Uint8Array;
  readonly generalPurposeBitFlag: number;
  readonly compressionMethod: number;
  readonly crc32: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly fileDataStart: number;
}

const FLAG_ENCRYPTED = 0x0001;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
/** Stored and deflated: the methods served (and the ones yauzl decodes). */
const METHODS = new Set([0, 8]);

export const isDirectory = (name: string): boolean => name.endsWith('/');

/** Why an entry's name is refused (zip slip, S139), or undefined. */
export function nameProblem(name: string): string | undefined {
  const plain = isDirectory(name) ? name.slice(0, -1) : name;
  return isSafeEntryName(plain)
    ? undefined
    : 'the name is not a plain relative path (absolute, drive letter, backslash, control character, empty, . or .. segment)';
}

/** Why one entry is refused on its own (method, encryption, S140 limits), or undefined. */
export function entryProblem(e: CentralRecord, limits: AssetLimits): string | undefined {
  if ((e.generalPurposeBitFlag & FLAG_ENCRYPTED) !== 0) return 'the entry is encrypted';
  if (!METHODS.has(e.compressionMethod))
    return `compression method ${e.compressionMethod} is not stored or deflate`;
  if (e.uncompressedSize > limits.maxEntryBytes)
    return `the entry is ${e.uncompressedSize} bytes uncompressed, over the limit of ${limits.maxEntryBytes}`;
  const ratio = e.uncompressedSize / Math.max(e.compressedSize, 1);
  if (e.uncompressedSize > limits.ratioFloorBytes && ratio > limits.maxRatio)
    return `the entry expands ${Math.round(ratio)} times, over the limit of ${limits.maxRatio}`;
  return undefined;
}

/** Why the central directory and the local header of one entry disagree (S142), or undefined. */
export function localHeaderProblem(c: CentralRecord, l: LocalRecord): string | undefined {
  if (!Buffer.from(c.fileNameRaw).equals(Buffer.from(l.fileName)))
    return 'the local header names another file';
  if (c.compressionMethod !== l.compressionMethod) return 'the local header has another compression method';
  const mask = FLAG_ENCRYPTED | FLAG_UTF8;
  if ((c.generalPurposeBitFlag & mask) !== (l.generalPurposeBitFlag & mask))
    return 'the local header has other flags';
  // With a data descriptor the local fields may be zero; the descriptor after the data is checked instead.
  const deferred = (l.generalPurposeBitFlag & FLAG_DESCRIPTOR) !== 0;
  const same = (local: number, central: number) => local === central || (deferred && local === 0);
  if (!same(l.crc32, c.crc32)) return 'the local header has another CRC-32';
  if (!same(l.compressedSize, c.compressedSize)) return 'the local header has another compressed size';
  if (!same(l.uncompressedSize, c.uncompressedSize)) return 'the local header has another size';
  return undefined;
}

/** True when the local header says a data descriptor follows the data. */
export const hasDescriptor = (l: LocalRecord): boolean => (l.generalPurposeBitFlag & FLAG_DESCRIPTOR) !== 0;

const DESCRIPTOR_SIGNATURE = 0x08074b50;

/**
 * Checks the data descriptor that follows an entry's data against the central directory; returns its length
 * in bytes, or a reason. `zip64` descriptors carry 8-byte sizes.
 */
export function checkDescriptor(c: CentralRecord, bytes: Buffer, zip64: boolean): number | string {
  const signed = bytes.length >= 4 && bytes.readUInt32LE(0) === DESCRIPTOR_SIGNATURE;
  const at = signed ? 4 : 0;
  const length = at + 4 + (zip64 ? 16 : 8);
  if (bytes.length < length) return 'the data descriptor is truncated';
  const size = (o: number) => (zip64 ? Number(bytes.readBigUInt64LE(o)) : bytes.readUInt32LE(o));
  const crc = bytes.readUInt32LE(at);
  const compressed = size(at + 4);
  const uncompressed = size(at + (zip64 ? 12 : 8));
  if (crc !== c.crc32 || compressed !== c.compressedSize || uncompressed !== c.uncompressedSize)
    return 'the data descriptor disagrees with the central directory';
  return length;
}

/** One entry's bytes in the file: local header, data and descriptor. */
export interface EntrySpan {
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

/**
 * Why the entries' spans are refused, or undefined: two entries that share bytes (the overlapping-entry zip
 * bomb) or an entry that runs into the central directory.
 */
export function layoutProblem(
  spans: readonly EntrySpan[],
  centralDirectoryStart: number,
): string | undefined {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  for (let i = 0; i < sorted.length; i++) {
    const s = sorted[i]!;
    const next = sorted[i + 1];
    if (next !== undefined && s.end > next.start)
      return `entries ${JSON.stringify(s.name)} and ${JSON.stringify(next.name)} overlap`;
    if (s.end > centralDirectoryStart)
      return `entry ${JSON.stringify(s.name)} runs into the central directory`;
  }
  return undefined;
}
