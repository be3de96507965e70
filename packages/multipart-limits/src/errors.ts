/**
 * Every code an {@link UploadError} can carry. Codes are stable public API: renaming or removing one is a
 * major change. {@link UPLOAD_STATUS_BY_CODE} gives the HTTP status each code is answered with.
 */
export const UPLOAD_ERROR_CODES = Object.freeze([
  'UPLOAD_CONTENT_ENCODING',
  'UPLOAD_UNSUPPORTED_MEDIA_TYPE',
  'UPLOAD_NOT_MULTIPART',
  'UPLOAD_BAD_BOUNDARY',
  'UPLOAD_REQUEST_TOO_LARGE',
  'UPLOAD_BODY_TOO_LARGE',
  'UPLOAD_BODY_NOT_UTF8',
  'UPLOAD_FILE_TOO_LARGE',
  'UPLOAD_FIELD_TOO_LARGE',
  /** Not raised since a third part became `UPLOAD_UNKNOWN_PART` (SPEC.md §5.3); kept, codes are never removed. */
  'UPLOAD_PARTS_LIMIT',
  'UPLOAD_HEADERS_LIMIT',
  'UPLOAD_UNKNOWN_PART',
  'UPLOAD_DUPLICATE_PART',
  'UPLOAD_STREAM_MUST_BE_FILE',
  'UPLOAD_BODY_MUST_BE_FIELD',
  'UPLOAD_PART_ORDER',
  'UPLOAD_MISSING_PART',
  'UPLOAD_MALFORMED',
  'UPLOAD_ABORTED',
] as const);

/** A code from {@link UPLOAD_ERROR_CODES}. */
export type UploadErrorCode = (typeof UPLOAD_ERROR_CODES)[number];

/**
 * The HTTP status an HTTP front-end answers each code with (README.md, "Error codes"): 415 for the content type
 * or encoding, 413 for a limit, 400 for malformed input. Spread it into the front-end's own code → status table.
 * A new code without a status fails typecheck.
 */
export const UPLOAD_STATUS_BY_CODE = Object.freeze({
  UPLOAD_CONTENT_ENCODING: 415,
  UPLOAD_UNSUPPORTED_MEDIA_TYPE: 415,
  UPLOAD_NOT_MULTIPART: 415,
  UPLOAD_BAD_BOUNDARY: 400,
  UPLOAD_REQUEST_TOO_LARGE: 413,
  UPLOAD_BODY_TOO_LARGE: 413,
  UPLOAD_BODY_NOT_UTF8: 400,
  UPLOAD_FILE_TOO_LARGE: 413,
  UPLOAD_FIELD_TOO_LARGE: 413,
  UPLOAD_PARTS_LIMIT: 413,
  UPLOAD_HEADERS_LIMIT: 413,
  UPLOAD_UNKNOWN_PART: 400,
  UPLOAD_DUPLICATE_PART: 400,
  UPLOAD_STREAM_MUST_BE_FILE: 400,
  UPLOAD_BODY_MUST_BE_FIELD: 400,
  UPLOAD_PART_ORDER: 400,
  UPLOAD_MISSING_PART: 400,
  UPLOAD_MALFORMED: 400,
  UPLOAD_ABORTED: 400,
} as const satisfies Record<UploadErrorCode, number>);

/**
 * The one error class of this package: `code` says what failed; `message` is lowercase and never carries
 * secrets or raw request bytes (at most a short escaped excerpt of a part name).
 */
export class UploadError extends Error {
  override readonly name = 'UploadError';
  constructor(
    readonly code: UploadErrorCode,
    message: string,
    options?: ErrorOptions & { details?: Readonly<Record<string, unknown>> },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
  /** Structured context, for example `{ part: 'stream' }` for `UPLOAD_MISSING_PART`. Never secret. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * True when `err` is an {@link UploadError}: `name` and membership of {@link UPLOAD_ERROR_CODES} (duck-typed: two
 * copies of this package may be loaded).
 */
export function isUploadError(err: unknown): err is UploadError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'UploadError' &&
    typeof e.code === 'string' &&
    (UPLOAD_ERROR_CODES as readonly string[]).includes(e.code)
  );
}
