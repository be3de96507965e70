import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { planUpload } from './check-headers.js';
import type { UploadKind, UploadPlan } from './check-headers.js';
import { UploadError } from './errors.js';
import { missingPart, requestTooLarge, streamTooLarge } from './internal/form-errors.js';
import { FormScanner } from './internal/form-scanner.js';
import { parsePartHead } from './internal/part-head.js';
import { PartRules } from './internal/part-rules.js';
import { decodeUtf8 } from './internal/raw-body.js';
import { abortedError, watchRequest } from './internal/request-watch.js';
import { resolveOptions } from './options.js';
import type { PartName, ReadUploadOptions, ResolvedOptions } from './options.js';

/** What {@link parseUploadBuffer} and {@link readUploadBuffered} return: an {@link Upload} with bytes. */
export interface BufferedUpload {
  /** How the request body was sent. */
  kind: UploadKind;
  /** As `Upload.body`: the JSON/text body or the `body` part (exact bytes, strict UTF-8), else undefined. */
  body: string | undefined;
  /**
   * As `Upload.stream`, but whole: the octet-stream body, or the `stream` part's content (undefined when the
   * form has none). A fresh buffer the caller owns (and may zero when done), never a view of the input.
   */
  stream: Buffer | undefined;
  /** As `Upload.streamFilename`. */
  streamFilename?: string | undefined;
}

function bodyTooLarge(limit: number): UploadError {
  return new UploadError('UPLOAD_BODY_TOO_LARGE', `the request body exceeds the limit of ${limit} bytes`, {
    details: { limit },
  });
}

function overCap(plan: UploadPlan): UploadError {
  return plan.kind === 'multipart' ? requestTooLarge(plan.byteCap) : bodyTooLarge(plan.byteCap);
}

/**
 * The multipart rules of SPEC.md §5 on a whole form, in the order the streaming reader applies them to a form
 * that arrives in one chunk: the request cap, then one scan in byte order in which the first defect wins
 * (framing, part count, header blocks, part rules, a `stream` part without a required `body`, the `body` cap
 * and UTF-8, the `stream` cap), then the closing delimiter and the required parts.
 */
function parseForm(bytes: Buffer, boundary: string, byteCap: number, o: ResolvedOptions): BufferedUpload {
  if (bytes.length > byteCap) throw requestTooLarge(byteCap);
  const limit = o.multipartByteLimit ?? 0;
  const rules = new PartRules();
  let parts = 0;
  let current: PartName | undefined;
  let body: string | undefined;
  let sawStream = false;
  let streamFilename: string | undefined;
  const slices: Buffer[] = [];
  let streamBytes = 0;
  const scanner = new FormScanner(
    boundary,
    o.bodyFieldByteLimit,
    {
      onPartHeaders: (lines) => {
        const head = parsePartHead(lines);
        current = rules.admit(head);
        parts++;
        if (current === 'stream') {
          // Where the streaming reader refuses it too: at the stream part's headers, before later bytes.
          if (o.requireParts.has('body') && !rules.has('body')) throw missingPart('body');
          sawStream = true;
          streamFilename = head.filename;
        }
        return current === 'body';
      },
      onPartContent: (buf, from, to) => {
        if (current !== 'stream') return;
        streamBytes += to - from;
        // At the first byte past the cap, as in the streaming reader: a later framing defect is not reached.
        if (streamBytes > limit) throw streamTooLarge(limit);
        slices.push(Buffer.from(buf.subarray(from, to)));
      },
      onPartEnd: (captured) => {
        current = undefined;
        if (captured === undefined) return;
        try {
          body = decodeUtf8(captured, 'the body part');
        } finally {
          captured.fill(0);
        }
      },
    },
    { wipeCopies: true },
  );
  try {
    scanner.push(bytes);
    scanner.end();
    const absent = (['body', 'stream'] as const).find((p) => o.requireParts.has(p) && !rules.has(p));
    if (absent !== undefined) throw missingPart(absent);
    if (parts === 0) throw missingPart(undefined);
  } catch (err) {
    for (const s of slices) s.fill(0);
    throw err;
  }
  if (!sawStream) return { kind: 'multipart', body, stream: undefined };
  const stream = slices.length === 1 ? slices[0]! : Buffer.concat(slices, streamBytes);
  if (slices.length > 1) for (const s of slices) s.fill(0);
  return { kind: 'multipart', body, stream, streamFilename };
}

function parsePlanned(plan: UploadPlan, bytes: Buffer, o: ResolvedOptions): BufferedUpload {
  switch (plan.kind) {
    case 'empty':
      return { kind: 'empty', body: undefined, stream: undefined };
    case 'json':
    case 'text':
      if (bytes.length > plan.byteCap) throw bodyTooLarge(plan.byteCap);
      return { kind: plan.kind, body: decodeUtf8(bytes, 'the request body'), stream: undefined };
    case 'octet':
      if (bytes.length > plan.byteCap) throw bodyTooLarge(plan.byteCap);
      return { kind: 'octet', body: undefined, stream: Buffer.from(bytes) };
    case 'multipart':
      if (plan.boundary === undefined || o.multipartByteLimit === undefined) {
        throw new UploadError('UPLOAD_BAD_BOUNDARY', 'multipart content type has no boundary');
      }
      return parseForm(bytes, plan.boundary, plan.byteCap, o);
  }
}

/**
 * Parses a whole request body that is already in memory, with exactly the rules, limits, codes and order of
 * {@link readUpload} fed the same bytes in one chunk (SPEC.md §3–§6): the header checks first, then the body.
 * Synchronous; nothing is streamed. `bytes` is the complete body after transfer decoding; it is only read
 * (zeroing it afterwards is the caller's choice). For a request with `Content-Length`, pass the headers it
 * came with, so the declared length is judged as well.
 * @throws UploadError every code of {@link readUpload} except `UPLOAD_ABORTED` (unless `signal` is already
 * aborted).
 * @throws TypeError or RangeError for invalid options (caller bug).
 */
export function parseUploadBuffer(
  headers: IncomingHttpHeaders,
  bytes: Uint8Array,
  options?: ReadUploadOptions,
): BufferedUpload {
  const o = resolveOptions(options);
  const plan = planUpload(headers, o);
  if (o.signal?.aborted) throw abortedError(o.signal.reason);
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return parsePlanned(plan, buf, o);
}

/** Reads the whole body into one buffer, refusing at the first byte past `plan.byteCap`. */
function readBytes(req: IncomingMessage, plan: UploadPlan, signal: AbortSignal | undefined): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const wipeChunks = (): void => {
      for (const c of chunks) c.fill(0);
      chunks.length = 0;
    };
    const finish = (err: UploadError | undefined): void => {
      unwatch();
      req.off('data', onData);
      req.off('end', onEnd);
      if (err === undefined) return;
      wipeChunks();
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > plan.byteCap) finish(overCap(plan));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      finish(undefined);
      if (chunks.length === 1) {
        resolve(chunks[0]!);
        return;
      }
      const whole = Buffer.concat(chunks, size);
      wipeChunks();
      resolve(whole);
    };
    const unwatch = watchRequest(req, signal, finish);
    req.on('data', onData);
    req.on('end', onEnd);
  });
}

/**
 * {@link readUpload} for small bodies: runs the header checks first (nothing is read when they fail), reads
 * the whole body into one buffer (counted against the same caps while reading: the first byte past one stops
 * reading), then parses it with {@link parseUploadBuffer}'s rules. Resolves only when the whole request was
 * read and valid; the request buffer is zeroed before it resolves or rejects. Memory per request is the
 * whole body, up to the caps: use it when the declared `Content-Length` is small, and {@link readUpload}
 * otherwise. After a failure while reading, the request is left paused and unread: answer with
 * `Connection: close`.
 * @throws UploadError every code of {@link readUpload}, `UPLOAD_ABORTED` included.
 * @throws TypeError or RangeError for invalid options (caller bug).
 */
export async function readUploadBuffered(
  req: IncomingMessage,
  options?: ReadUploadOptions,
): Promise<BufferedUpload> {
  const o = resolveOptions(options);
  const plan = planUpload(req.headers, o);
  if (o.signal?.aborted) throw abortedError(o.signal.reason);
  if (plan.kind === 'empty') return { kind: 'empty', body: undefined, stream: undefined };
  const bytes = await readBytes(req, plan, o.signal);
  try {
    return parsePlanned(plan, bytes, o);
  } finally {
    bytes.fill(0);
  }
}
