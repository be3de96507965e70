/**
 * `bytes().gzip` / `gunzip` (SPEC.md §7.1.1, ADR 0075): node:zlib, run in the sandbox worker thread (never in
 * QuickJS, never on the main thread). Inflating is bounded while it runs: zlib's `maxOutputLength` counts the
 * output chunk by chunk and stops at the cap, so a bomb costs at most the cap in memory, never its full size.
 * The zip container is in `zip-read.ts` / `zip-write.ts`; the entry-name rule both use is here.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { EngineError } from './errors.js';
import { integerArg } from './host-args.js';

/** The most a `gzip` level may be (zlib's 9); `-1` is zlib's default (6). */
export const MAX_GZIP_LEVEL = 9;

/** Longest zip entry name, in UTF-8 bytes. */
export const MAX_ZIP_NAME_BYTES = 1024;

/** Most entries a zip archive may have (read or written). */
export const MAX_ZIP_ENTRIES = 10_000;

/** What `{ info: true }` makes node:zlib's synchronous calls return (not in @types/node). */
export interface InflateInfo {
  buffer: Buffer;
  engine: { bytesWritten: number };
}

/** Malformed compressed input (ENGINE_COMPRESSION_INVALID). */
export function invalid(message: string): EngineError {
  return new EngineError('ENGINE_COMPRESSION_INVALID', message);
}

/** Output over the cap (ENGINE_COMPRESSION_LIMIT). */
export function overCap(what: string, cap: number): EngineError {
  return new EngineError('ENGINE_COMPRESSION_LIMIT', `${what}: the output is larger than ${cap} bytes`);
}

/**
 * A node:zlib failure as an engine error: over the cap (`ERR_BUFFER_TOO_LARGE`) → LIMIT; the input ended early
 * (`Z_BUF_ERROR`) → truncated; anything else (`Z_DATA_ERROR`: bad header, bad block, wrong check value) → corrupt.
 * zlib's own messages are fixed texts, never input bytes.
 */
export function zlibFailure(what: string, err: unknown, cap: number): EngineError {
  const e = err as { code?: unknown; message?: unknown };
  if (e.code === 'ERR_BUFFER_TOO_LARGE') return overCap(what, cap);
  if (e.code === 'Z_BUF_ERROR') return invalid(`${what}: the compressed data is truncated`);
  const detail = typeof e.message === 'string' ? ` (${e.message.slice(0, 80)})` : '';
  return invalid(`${what}: the compressed data is corrupt${detail}`);
}

/**
 * A positive integer cap no larger than `limit` (the run's memory limit).
 * @throws EngineError `ENGINE_BAD_ARGUMENT` for anything but a positive integer, null or undefined.
 */
export function capOf(requested: unknown, limit: number, what: string): number {
  if (requested === undefined || requested === null) return limit;
  return Math.min(integerArg(requested, `${what}: maxBytes`, 1), limit);
}

/**
 * gzip (RFC 1952) of `data`: one member, no file name, modification time 0, so the same input and level always
 * give the same bytes.
 * @throws EngineError `ENGINE_BAD_ARGUMENT` for a level that is not an integer from -1 to 9.
 */
export function gzipBytes(data: Uint8Array, level: unknown): Uint8Array {
  const l = level === undefined || level === null ? -1 : integerArg(level, 'gzip: level', -1, MAX_GZIP_LEVEL);
  return gzipSync(data, { level: l });
}

/**
 * The bytes of a gzip stream: one or more members (RFC 1952 §2.2), each with its CRC-32 and length checked, and
 * nothing after the last one.
 * @throws EngineError `ENGINE_COMPRESSION_LIMIT` when the output would pass `cap` bytes (inflating stops there);
 *   `ENGINE_COMPRESSION_INVALID` for an empty, truncated or corrupt stream, or bytes after its end.
 */
export function gunzipBytes(data: Uint8Array, cap: number): Uint8Array {
  let r: InflateInfo;
  try {
    r = gunzipSync(data, { maxOutputLength: cap, info: true }) as unknown as InflateInfo;
  } catch (err) {
    throw zlibFailure('gunzip', err, cap);
  }
  // zlib stops at the end of the last member and, unless what follows starts like another member, ignores the
  // rest (zero padding, say): anything left over is refused rather than dropped.
  const extra = data.length - r.engine.bytesWritten;
  if (extra !== 0) throw invalid(`gunzip: ${extra} bytes after the end of the gzip stream`);
  return r.buffer;
}

// Control characters, backslash (a separator on Windows) and colon (drive letters, alternate data streams).
function hasUnsafeChar(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c || c === 0x3a) return true;
  }
  return false;
}

/**
 * The zip entry-name rule (S139, SPEC.md §7.1.2): a relative path of `/`-separated segments, none empty, `.` or
 * `..`; no leading `/`, backslash, colon or control character; at most {@link MAX_ZIP_NAME_BYTES} bytes. A
 * directory entry (`dir`) ends with one `/`.
 */
export function isSafeEntryName(name: string, byteLength: number, dir: boolean): boolean {
  if (name === '' || byteLength > MAX_ZIP_NAME_BYTES || hasUnsafeChar(name)) return false;
  const path = dir ? name.slice(0, -1) : name;
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** A short, escaped excerpt of an entry name for a message (never more than 40 characters of it). */
export function nameExcerpt(name: string): string {
  return JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
}
