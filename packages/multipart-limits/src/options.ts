/** Default cap of the `body` part of a multipart form, in bytes (1 MiB, busboy's own field default). */
export const DEFAULT_BODY_FIELD_BYTE_LIMIT = 1024 * 1024;

/** Default cap of a non-multipart request body (JSON, text or octet-stream), in bytes (1 MiB). */
export const DEFAULT_RAW_BODY_BYTE_LIMIT = 1024 * 1024;

/**
 * Bytes a multipart request may carry beyond its `stream` and `body` contents: delimiters, part headers,
 * preamble and epilogue (SPEC.md §4). A declared or counted length above
 * `multipartByteLimit + bodyFieldByteLimit + MULTIPART_OVERHEAD_BYTES` is `UPLOAD_REQUEST_TOO_LARGE`.
 */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** Cap of one part's header block (the bytes between the delimiter line and the empty line), in bytes. */
export const MAX_PART_HEADER_BYTES = 8 * 1024;

/** Most header lines one part may have. */
export const MAX_PART_HEADER_LINES = 16;

/** Most parts a form may have: `body` and `stream`. The third part is refused when it starts. */
export const MAX_PARTS = 2;

/** The two part names a form may use (docs/interfaces.md §6.2). */
export type PartName = 'body' | 'stream';

/** Options of {@link readUpload} and {@link checkUploadHeaders}. */
export interface ReadUploadOptions {
  /**
   * The step's `multiPartUploadByteLimit`: the most bytes the `stream` part's content may have. Exactly this
   * many pass, one more is `UPLOAD_FILE_TOO_LARGE`. When undefined, multipart is refused with
   * `UPLOAD_NOT_MULTIPART`.
   */
  multipartByteLimit?: number | undefined;
  /** Most bytes of the `body` part's content (default {@link DEFAULT_BODY_FIELD_BYTE_LIMIT}). */
  bodyFieldByteLimit?: number | undefined;
  /** Most bytes of a JSON, text or octet-stream request body (default {@link DEFAULT_RAW_BODY_BYTE_LIMIT}). */
  rawBodyByteLimit?: number | undefined;
  /** Parts a multipart form must contain; a missing one is `UPLOAD_MISSING_PART` naming it. */
  requireParts?: readonly PartName[] | undefined;
  /** Aborts reading: the upload fails (or its stream errors) with `UPLOAD_ABORTED`. */
  signal?: AbortSignal | undefined;
}

/** Options with defaults applied and checked. */
export interface ResolvedOptions {
  multipartByteLimit: number | undefined;
  bodyFieldByteLimit: number;
  rawBodyByteLimit: number;
  requireParts: ReadonlySet<PartName>;
  signal: AbortSignal | undefined;
}

function byteLimit(name: string, value: number | undefined, fallback: number): number;
function byteLimit(name: string, value: number | undefined, fallback: undefined): number | undefined;
function byteLimit(
  name: string,
  value: number | undefined,
  fallback: number | undefined,
): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, received ${typeof value}`);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative safe integer, received ${value}`);
  }
  return value;
}

function partSet(parts: readonly PartName[] | undefined): ReadonlySet<PartName> {
  const set = new Set<PartName>();
  for (const p of parts ?? []) {
    if (p !== 'body' && p !== 'stream')
      throw new RangeError(`requireParts entries must be 'body' or 'stream'`);
    set.add(p);
  }
  return set;
}

/**
 * Applies defaults and validates caller-supplied options.
 * @throws TypeError or RangeError naming the option when a limit is not a non-negative safe integer.
 */
export function resolveOptions(options: ReadUploadOptions = {}): ResolvedOptions {
  return {
    multipartByteLimit: byteLimit('multipartByteLimit', options.multipartByteLimit, undefined),
    bodyFieldByteLimit: byteLimit(
      'bodyFieldByteLimit',
      options.bodyFieldByteLimit,
      DEFAULT_BODY_FIELD_BYTE_LIMIT,
    ),
    rawBodyByteLimit: byteLimit('rawBodyByteLimit', options.rawBodyByteLimit, DEFAULT_RAW_BODY_BYTE_LIMIT),
    requireParts: partSet(options.requireParts),
    signal: options.signal,
  };
}

/** The request byte cap of a multipart upload (SPEC.md §4). */
export function multipartRequestCap(o: ResolvedOptions, limit: number): number {
  return limit + o.bodyFieldByteLimit + MULTIPART_OVERHEAD_BYTES;
}
