import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { UploadError } from '../errors.js';
import { LimitedStream } from './limited-stream.js';
import { watchRequest } from './request-watch.js';

// S1: the exact bytes as a string: fatal (no U+FFFD) and the BOM kept for the caller's strict JSON check.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes bytes as strict UTF-8.
 * @throws UploadError `UPLOAD_BODY_NOT_UTF8` on any invalid sequence.
 */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return UTF8.decode(bytes);
  } catch (cause) {
    throw new UploadError('UPLOAD_BODY_NOT_UTF8', `${what} is not valid utf-8`, { cause });
  }
}

function tooLarge(limit: number): UploadError {
  return new UploadError('UPLOAD_BODY_TOO_LARGE', `the request body exceeds the limit of ${limit} bytes`, {
    details: { limit },
  });
}

/**
 * Reads a JSON or text body of at most `limit` bytes into a string. On failure the request is left paused
 * and unpiped: the caller answers with `Connection: close`.
 */
export function readTextBody(
  req: IncomingMessage,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err: UploadError | undefined): void => {
      unwatch();
      req.off('data', onData);
      req.off('end', onEnd);
      if (err === undefined) return;
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) finish(tooLarge(limit));
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      finish(undefined);
      try {
        resolve(decodeUtf8(Buffer.concat(chunks, size), 'the request body'));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    const unwatch = watchRequest(req, signal, finish);
    req.on('data', onData);
    req.on('end', onEnd);
  });
}

/**
 * Streams an octet-stream body of at most `limit` bytes with backpressure. Over the limit, on abort or on
 * `signal`, the returned stream errors (`UPLOAD_BODY_TOO_LARGE`, `UPLOAD_ABORTED`); it never ends early.
 */
export function openOctetBody(
  req: IncomingMessage,
  limit: number,
  signal: AbortSignal | undefined,
): Readable {
  const out = new LimitedStream(limit, 'UPLOAD_BODY_TOO_LARGE', 'the request body');
  let done = false;
  const onEnd = (): void => unwatch();
  const stop = (err: Error | undefined): void => {
    if (done) return;
    done = true;
    unwatch();
    req.off('end', onEnd);
    req.unpipe(out);
    if (err !== undefined) {
      req.pause();
      out.destroy(err);
    }
  };
  const unwatch = watchRequest(req, signal, stop);
  // An error listener is always present, so an unobserved failure cannot crash the process.
  out.on('error', stop);
  out.on('close', () =>
    stop(out.readableEnded ? undefined : new UploadError('UPLOAD_ABORTED', 'the stream was closed')),
  );
  req.on('end', onEnd);
  req.pipe(out);
  return out;
}
