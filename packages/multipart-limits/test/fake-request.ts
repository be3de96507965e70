import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { isUploadError, readUpload } from '../src/index.js';
import type { ReadUploadOptions } from '../src/index.js';

/** An in-memory request that yields `chunks` and then ends (complete), for fast parser tests. */
export function fakeRequest(headers: Record<string, string>, chunks: Iterable<Uint8Array>): IncomingMessage {
  const req = Readable.from(
    (function* () {
      for (const c of chunks) yield Buffer.from(c);
    })(),
    { objectMode: false },
  ) as unknown as IncomingMessage & { complete: boolean };
  Object.assign(req, { headers, complete: false });
  req.once('end', () => (req.complete = true));
  return req;
}

/** What readUpload plus reading the stream produced: a summary, or an UploadError code. */
export type Outcome = { ok: { kind: string; body?: string; bytes: number; sha?: string } } | { code: string };

/** Runs readUpload on a fake request and reads the stream to its end. Anything but an UploadError is rethrown. */
export async function outcome(req: IncomingMessage, options: ReadUploadOptions): Promise<Outcome> {
  try {
    const up = await readUpload(req, options);
    let bytes = 0;
    const h = createHash('sha256');
    if (up.stream) {
      for await (const c of up.stream as AsyncIterable<Buffer>) {
        bytes += c.length;
        h.update(c);
      }
    }
    return { ok: { kind: up.kind, body: up.body, bytes, ...(up.stream ? { sha: h.digest('hex') } : {}) } };
  } catch (err) {
    if (isUploadError(err)) return { code: err.code };
    throw err;
  }
}

/** The error readUpload or its stream ended in, or undefined on success. */
export async function failure(req: IncomingMessage, options: ReadUploadOptions): Promise<Error | undefined> {
  try {
    const up = await readUpload(req, options);
    if (up.stream) for await (const _ of up.stream) void _;
    return undefined;
  } catch (err) {
    return err as Error;
  }
}
