import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import {
  checkUploadHeaders,
  readUpload,
  readUploadBuffered,
  type ReadUploadOptions,
} from '@org/multipart-limits';
import type { Limits } from './limits.js';
import { RequestError } from './errors.js';

const optionsByLimits = new WeakMap<Limits, ReadonlyMap<string, ReadUploadOptions>>();

/**
 * The upload options of every operation that takes a body, by its path in the HTTP API (also what a
 * `checkContinue` listener judges headers with). Built once per `limits` object: callers share one map.
 */
export function uploadOptionsByPath(limits: Limits): ReadonlyMap<string, ReadUploadOptions> {
  let map = optionsByLimits.get(limits);
  if (map === undefined) {
    map = buildUploadOptions(limits);
    optionsByLimits.set(limits, map);
  }
  return map;
}

function buildUploadOptions(limits: Limits): ReadonlyMap<string, ReadUploadOptions> {
  const form = (streamBytes: number): ReadUploadOptions => ({
    multipartByteLimit: streamBytes,
    bodyFieldByteLimit: limits.bodyFieldBytes,
    rawBodyByteLimit: limits.bodyFieldBytes,
    requireParts: ['body', 'stream'],
  });
  const json: ReadUploadOptions = {
    multipartByteLimit: limits.workflowBytes,
    bodyFieldByteLimit: limits.bodyFieldBytes,
    rawBodyByteLimit: limits.workflowBytes,
    requireParts: ['stream'],
  };
  return new Map<string, ReadUploadOptions>([
    ['/workflow-package', form(limits.workflowBytes)],
    ['/bootstrap-encrypt', form(limits.bootstrapBytes)],
    ['/string-encrypt', form(limits.stringBytes)],
    ['/package-envelope', form(limits.packageBytes)],
    ['/workflow-compile', json],
    ['/workflow-hash', json],
    ['/build-workflows', json],
    ['/workflow-inspect', { rawBodyByteLimit: limits.packageBytes }],
  ]);
}

function refuseKind(accepted: string): never {
  throw new RequestError('REQUEST_UNSUPPORTED_MEDIA_TYPE', `this endpoint takes ${accepted} only`, {
    headers: { 'Accept-Post': accepted },
  });
}

/**
 * The upload options of a path. A path without an entry is a programming error, not a request error: failing
 * here (at start) beats silently refusing every multipart request to it.
 */
export function uploadOptionsFor(
  map: ReadonlyMap<string, ReadUploadOptions>,
  path: string,
): ReadUploadOptions {
  const options = map.get(path);
  if (options === undefined) throw new Error(`no upload options for ${path}`);
  return options;
}

/** The media type essence of a request (`multipart/form-data` of `multipart/form-data; boundary=x`). */
function essenceOf(req: IncomingMessage): string {
  const type = req.headers['content-type'] ?? '';
  // The usual form of a form upload, answered without splitting, trimming or lowering the header.
  if (type.startsWith('multipart/form-data;')) return 'multipart/form-data';
  return type.split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Requests whose declared `Content-Length` is at most this are read whole and parsed in one step
 * (`readUploadBuffered`: the same rules, limits and codes as streaming, ADR 0009); longer or chunked ones
 * stream through `readUpload`, refused at the first byte past a cap.
 */
export const BUFFERED_BODY_BYTES = 256 * 1024;

/** True for a body with a declared length of at most {@link BUFFERED_BODY_BYTES} (and no transfer coding). */
function isSmall(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return false;
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) <= BUFFERED_BODY_BYTES;
}

/** Reads a whole stream (already capped by readUpload) into one byte array. */
export async function readAll(stream: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  if (chunks.length === 1) return chunks[0]!;
  const whole = Buffer.concat(chunks);
  for (const c of chunks) c.fill(0);
  return whole;
}

/** A multipart `body` + `stream` request: `body` as text, the `stream` part's bytes read on demand. */
export interface FormUpload {
  body: string;
  /** The `stream` part's content (read once; later calls return the same bytes). */
  content: () => Promise<Uint8Array>;
  /** Zeroes the content if it was read (call when the request is done, whatever its outcome). */
  wipe: () => void;
}

function formUpload(body: string, read: () => Promise<Uint8Array>): FormUpload {
  let content: Promise<Uint8Array> | undefined;
  let bytes: Uint8Array | undefined;
  return {
    body,
    content: () =>
      (content ??= read().then((b) => {
        bytes = b;
        return b;
      })),
    wipe: () => bytes?.fill(0),
  };
}

/**
 * Reads a `body` + `stream` form (docs/interfaces.md §1.2). Refuses any other media type before reading.
 * @throws RequestError `REQUEST_UNSUPPORTED_MEDIA_TYPE`; UploadError for every framing or limit failure.
 */
export async function readForm(req: IncomingMessage, options: ReadUploadOptions): Promise<FormUpload> {
  // Judge the media type first: a JSON body here is 415, whatever its size.
  if (essenceOf(req) !== 'multipart/form-data') refuseKind('multipart/form-data');
  // Both readers run checkUploadHeaders' checks themselves before reading anything.
  if (isSmall(req)) {
    const whole = await readUploadBuffered(req, options);
    // requireParts guarantees both; the checks keep the types honest.
    if (whole.body === undefined || whole.stream === undefined) refuseKind('multipart/form-data');
    const stream = whole.stream;
    return formUpload(whole.body, () => Promise.resolve(stream));
  }
  const upload = await readUpload(req, options);
  if (upload.body === undefined || upload.stream === undefined) refuseKind('multipart/form-data');
  const stream = upload.stream;
  return formUpload(upload.body, () => readAll(stream));
}

/**
 * Reads a JSON document sent as `application/json` or as the `stream` part of a form.
 * @throws RequestError `REQUEST_UNSUPPORTED_MEDIA_TYPE`, `REQUEST_FIELD_INVALID` (a `body` part); UploadError.
 */
export async function readJsonDocument(
  req: IncomingMessage,
  options: ReadUploadOptions,
): Promise<Uint8Array> {
  const kind = checkUploadHeaders(req.headers, options);
  if (kind !== 'json' && kind !== 'multipart') refuseKind('application/json, multipart/form-data');
  const upload = isSmall(req) ? await readUploadBuffered(req, options) : await readUpload(req, options);
  if (kind === 'json') return Buffer.from(upload.body ?? '', 'utf8');
  if (upload.body !== undefined) {
    throw new RequestError(
      'REQUEST_FIELD_INVALID',
      'this endpoint takes only a stream part, not a body part',
      {
        errors: [{ pointer: '', detail: 'unexpected part "body"' }],
      },
    );
  }
  const { stream } = upload;
  return stream instanceof Uint8Array ? stream : readAll(stream as Readable);
}

/**
 * Reads a raw `application/octet-stream` body whole.
 * @throws RequestError `REQUEST_UNSUPPORTED_MEDIA_TYPE`; UploadError.
 */
export async function readOctets(req: IncomingMessage, options: ReadUploadOptions): Promise<Uint8Array> {
  if (essenceOf(req) !== 'application/octet-stream') refuseKind('application/octet-stream');
  if (isSmall(req)) return (await readUploadBuffered(req, options)).stream ?? new Uint8Array(0);
  const upload = await readUpload(req, options);
  return readAll(upload.stream as Readable);
}
