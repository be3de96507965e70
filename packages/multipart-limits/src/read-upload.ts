import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { planUpload } from './check-headers.js';
import { UploadError } from './errors.js';
import { readMultipart } from './internal/multipart.js';
import { openOctetBody, readTextBody } from './internal/raw-body.js';
import { abortedError } from './internal/request-watch.js';
import { resolveOptions } from './options.js';
import type { ReadUploadOptions } from './options.js';
import type { Upload } from './upload.js';

/**
 * Parses a request into what a step receives (docs/interfaces.md §6.2; the exact rules are SPEC.md):
 * `application/json` and `text/plain` become `body` (a string); `application/octet-stream` becomes `stream`;
 * `multipart/form-data` becomes the `body` part and the `stream` part, accepted only when
 * `multipartByteLimit` is set. Header checks run first, before any body byte is read.
 *
 * For `octet` and for a form with a `stream` part, the promise resolves as soon as streaming can start, and
 * later failures (over a limit, malformed rest of form, client abort, `signal`) make `stream` error with an
 * UploadError; it never ends cleanly unless the whole request was valid. After any failure the request is left
 * paused and unread: answer it with `Connection: close`.
 *
 * @throws UploadError `UPLOAD_CONTENT_ENCODING`, `UPLOAD_UNSUPPORTED_MEDIA_TYPE`, `UPLOAD_NOT_MULTIPART`,
 * `UPLOAD_BAD_BOUNDARY`, `UPLOAD_REQUEST_TOO_LARGE`, `UPLOAD_BODY_TOO_LARGE`, `UPLOAD_BODY_NOT_UTF8`,
 * `UPLOAD_FILE_TOO_LARGE`, `UPLOAD_FIELD_TOO_LARGE`, `UPLOAD_HEADERS_LIMIT`,
 * `UPLOAD_UNKNOWN_PART`, `UPLOAD_DUPLICATE_PART`, `UPLOAD_STREAM_MUST_BE_FILE`, `UPLOAD_BODY_MUST_BE_FIELD`,
 * `UPLOAD_PART_ORDER`, `UPLOAD_MISSING_PART`, `UPLOAD_MALFORMED`, `UPLOAD_ABORTED` (as a rejection, or as
 * the error of `stream` once resolved).
 * @throws TypeError or RangeError for invalid options (caller bug).
 */
export async function readUpload(req: IncomingMessage, options?: ReadUploadOptions): Promise<Upload> {
  const o = resolveOptions(options);
  const plan = planUpload(req.headers, o);
  if (o.signal?.aborted) throw abortedError(o.signal.reason);
  switch (plan.kind) {
    case 'empty':
      return { kind: 'empty', body: undefined, stream: undefined };
    case 'json':
    case 'text':
      return { kind: plan.kind, body: await readTextBody(req, plan.byteCap, o.signal), stream: undefined };
    case 'octet':
      return { kind: 'octet', body: undefined, stream: openOctetBody(req, plan.byteCap, o.signal) };
    case 'multipart':
      if (plan.boundary === undefined || o.multipartByteLimit === undefined) {
        throw new UploadError('UPLOAD_BAD_BOUNDARY', 'multipart content type has no boundary');
      }
      return readMultipart(req, plan.boundary, plan.byteCap, {
        ...o,
        multipartByteLimit: o.multipartByteLimit,
      });
  }
}

/**
 * An empty byte stream (not object mode), for a step whose form had no `stream` part (S18: "the processor gets
 * the body and an empty stream as documented").
 * @throws nothing.
 */
export function emptyStream(): Readable {
  return Readable.from([], { objectMode: false });
}
