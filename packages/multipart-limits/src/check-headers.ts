import type { IncomingHttpHeaders } from 'node:http';
import { UploadError } from './errors.js';
import { boundaryOf, parseMediaType } from './internal/media-type.js';
import type { MediaType } from './internal/media-type.js';
import { multipartRequestCap, resolveOptions } from './options.js';
import type { ReadUploadOptions, ResolvedOptions } from './options.js';

/** What a request body is delivered as (docs/interfaces.md §6.2). `empty`: no content type and no body. */
export type UploadKind = 'json' | 'text' | 'octet' | 'multipart' | 'empty';

/**
 * Media types {@link readUpload} accepts, for an `Accept-Post` header on a 415 answer (S10).
 * `multipart/form-data` is accepted only when `multipartByteLimit` is set; see {@link acceptedMediaTypes}.
 */
export const ACCEPTED_MEDIA_TYPES = [
  'application/json',
  'text/plain',
  'application/octet-stream',
  'multipart/form-data',
] as const;

const KIND_BY_ESSENCE: ReadonlyMap<string, UploadKind> = new Map<string, UploadKind>([
  ['application/json', 'json'],
  ['text/plain', 'text'],
  ['application/octet-stream', 'octet'],
  ['multipart/form-data', 'multipart'],
]);

/** The result of the header checks: how to read the body and the most bytes it may have. */
export interface UploadPlan {
  kind: UploadKind;
  /** Most bytes of the request body (counted after transfer decoding). */
  byteCap: number;
  /** Present for `multipart`. */
  boundary?: string;
}

/**
 * The media types accepted with these options, comma-separated, as an `Accept-Post` value (S10).
 * @throws TypeError or RangeError for invalid options (caller bug).
 */
export function acceptedMediaTypes(options?: ReadUploadOptions): string {
  const o = resolveOptions(options);
  return ACCEPTED_MEDIA_TYPES.filter(
    (t) => t !== 'multipart/form-data' || o.multipartByteLimit !== undefined,
  ).join(', ');
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headerValue(headers, 'content-length');
  return headerValue(headers, 'transfer-encoding') !== undefined || (length !== undefined && length !== '0');
}

// S9: nothing is ever decompressed; any coding but identity is refused.
function checkEncoding(headers: IncomingHttpHeaders): void {
  const coding = headerValue(headers, 'content-encoding')?.trim().toLowerCase();
  if (coding === undefined || coding === '' || coding === 'identity') return;
  throw new UploadError(
    'UPLOAD_CONTENT_ENCODING',
    'content-encoding is not supported; send the body uncompressed',
  );
}

function mediaTypeOf(headers: IncomingHttpHeaders): MediaType | undefined {
  const raw = headerValue(headers, 'content-type');
  if (raw === undefined) return undefined;
  const parsed = parseMediaType(raw.trim());
  if (parsed === undefined)
    throw new UploadError('UPLOAD_UNSUPPORTED_MEDIA_TYPE', 'content-type is malformed');
  return parsed;
}

function kindOf(mediaType: MediaType): UploadKind {
  const kind = KIND_BY_ESSENCE.get(mediaType.essence);
  if (kind === undefined) {
    throw new UploadError('UPLOAD_UNSUPPORTED_MEDIA_TYPE', 'content-type is not accepted', {
      details: { accepted: ACCEPTED_MEDIA_TYPES },
    });
  }
  if (kind === 'multipart') return kind; // its parameters are judged by multipartPlan (S12 before S24)
  if (mediaType.params === undefined)
    throw new UploadError('UPLOAD_UNSUPPORTED_MEDIA_TYPE', 'content-type is malformed');
  const charset = mediaType.params.get('charset')?.toLowerCase();
  if ((kind === 'json' || kind === 'text') && charset !== undefined && charset !== 'utf-8') {
    throw new UploadError('UPLOAD_UNSUPPORTED_MEDIA_TYPE', 'only the utf-8 charset is accepted');
  }
  return kind;
}

function multipartPlan(headers: IncomingHttpHeaders, mediaType: MediaType, o: ResolvedOptions): UploadPlan {
  // S12: refused before anything is parsed or stored.
  if (o.multipartByteLimit === undefined) {
    throw new UploadError('UPLOAD_NOT_MULTIPART', 'multipart uploads are not enabled for this endpoint');
  }
  // busboy unescapes quoted-pairs differently; a backslash could make the two parsers see different boundaries.
  if (headerValue(headers, 'content-type')?.includes('\\')) {
    throw new UploadError('UPLOAD_BAD_BOUNDARY', 'multipart boundary must not contain a backslash');
  }
  return {
    kind: 'multipart',
    boundary: boundaryOf(mediaType),
    byteCap: multipartRequestCap(o, o.multipartByteLimit),
  };
}

function checkDeclaredLength(headers: IncomingHttpHeaders, plan: UploadPlan): void {
  const declared = headerValue(headers, 'content-length');
  if (declared === undefined || Number(declared) <= plan.byteCap) return;
  const code = plan.kind === 'multipart' ? 'UPLOAD_REQUEST_TOO_LARGE' : 'UPLOAD_BODY_TOO_LARGE';
  throw new UploadError(code, `declared content-length exceeds the limit of ${plan.byteCap} bytes`, {
    details: { limit: plan.byteCap },
  });
}

/** {@link checkUploadHeaders} on resolved options, returning the full plan. */
export function planUpload(headers: IncomingHttpHeaders, o: ResolvedOptions): UploadPlan {
  checkEncoding(headers);
  const mediaType = mediaTypeOf(headers);
  if (mediaType === undefined) {
    if (!hasBody(headers)) return { kind: 'empty', byteCap: 0 };
    throw new UploadError('UPLOAD_UNSUPPORTED_MEDIA_TYPE', 'a request body needs a content-type', {
      details: { accepted: ACCEPTED_MEDIA_TYPES },
    });
  }
  const kind = kindOf(mediaType);
  const plan =
    kind === 'multipart' ? multipartPlan(headers, mediaType, o) : { kind, byteCap: o.rawBodyByteLimit };
  checkDeclaredLength(headers, plan);
  return plan;
}

/**
 * Every check that needs only the request headers, in the order of SPEC.md §3: content coding, media type,
 * multipart enabled, boundary, declared `Content-Length`. Call it before reading the body, and from a
 * `checkContinue` listener so an over-limit upload is refused without `100 Continue` (S6, S8).
 * {@link readUpload} runs the same checks first.
 * @returns how the body will be delivered.
 * @throws UploadError `UPLOAD_CONTENT_ENCODING`, `UPLOAD_UNSUPPORTED_MEDIA_TYPE`, `UPLOAD_NOT_MULTIPART`,
 * `UPLOAD_BAD_BOUNDARY`, `UPLOAD_REQUEST_TOO_LARGE` (multipart), `UPLOAD_BODY_TOO_LARGE` (other bodies).
 * @throws TypeError or RangeError for invalid options (caller bug).
 */
export function checkUploadHeaders(headers: IncomingHttpHeaders, options?: ReadUploadOptions): UploadKind {
  return planUpload(headers, resolveOptions(options)).kind;
}
