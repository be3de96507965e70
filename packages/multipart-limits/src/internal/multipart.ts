import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { UploadError, isUploadError } from '../errors.js';
import type { PartName, ResolvedOptions } from '../options.js';
import type { Upload } from '../upload.js';
import { missingPart, requestTooLarge, streamTooLarge } from './form-errors.js';
import { FormScanner } from './form-scanner.js';
import { parsePartHead } from './part-head.js';
import { PartRules } from './part-rules.js';
import { decodeUtf8 } from './raw-body.js';
import { abortedError, watchRequest } from './request-watch.js';

/**
 * Content bytes `[from, to)` of `buf` as a chunk of the delivered stream whose ArrayBuffer holds nothing anyone
 * else uses (§6): a view of the request's own chunk when that chunk spans its whole ArrayBuffer (Node's HTTP
 * parser gives every body chunk a buffer of its own, never reused), otherwise a copy in an unpooled buffer
 * (a joined buffer is the scanner's; a pooled copy would share its ArrayBuffer with unrelated bytes).
 */
function ownedPiece(buf: Buffer, from: number, to: number, requestChunk: boolean): Buffer {
  if (requestChunk && buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength)
    return buf.subarray(from, to);
  const copy = Buffer.allocUnsafeSlow(to - from);
  buf.copy(copy, 0, from, to);
  return copy;
}

function malformed(cause?: unknown): UploadError {
  return new UploadError('UPLOAD_MALFORMED', 'the multipart body is malformed', { cause });
}

/**
 * One multipart upload, parsed by the {@link FormScanner} alone (ADR 0022): request cap, framing, part rules,
 * the exact `body` capture, and the `stream` part's content, which goes to the delivered stream with
 * backpressure (the request is paused while the consumer is behind). The delivered stream ends only after the
 * whole form was valid (S25). The first failure wins; after it the delivered stream errors, every listener
 * added to the request is removed and the request is left paused and unread, for the caller to answer with
 * `Connection: close`.
 */
class MultipartSession {
  private settled = false;
  private bytes = 0;
  private parts = 0;
  private current: PartName | undefined;
  private body: string | undefined;
  private streamFilename: string | undefined;
  private output: Readable | undefined;
  private streamBytes = 0;
  /** The request chunk being scanned: content slices of it are passed on as views, not copied. */
  private chunk: Buffer | undefined;
  private readonly rules = new PartRules();
  private readonly scanner: FormScanner;
  private readonly unwatch: () => void;
  private readonly onData = (chunk: Buffer): void => this.scan(chunk);
  private readonly onEnd = (): void => this.complete();

  constructor(
    private readonly req: IncomingMessage,
    boundary: string,
    private readonly byteCap: number,
    private readonly o: ResolvedOptions & { multipartByteLimit: number },
    private readonly resolve: (u: Upload) => void,
    private readonly reject: (e: Error) => void,
  ) {
    this.scanner = new FormScanner(boundary, o.bodyFieldByteLimit, {
      onPartHeaders: (lines) => this.onPartHeaders(lines),
      onPartContent: (buf, from, to) => this.onPartContent(buf, from, to),
      onPartEnd: (captured) => {
        this.current = undefined;
        if (captured !== undefined) this.body = decodeUtf8(captured, 'the body part');
      },
    });
    this.unwatch = watchRequest(req, o.signal, (e) => this.fail(e));
  }

  start(): void {
    this.req.on('data', this.onData);
    this.req.on('end', this.onEnd);
  }

  private scan(chunk: Buffer): void {
    if (this.settled) return;
    this.bytes += chunk.length;
    if (this.bytes > this.byteCap) return this.fail(requestTooLarge(this.byteCap));
    this.chunk = chunk;
    try {
      this.scanner.push(chunk);
    } catch (err) {
      this.fail(err);
    } finally {
      this.chunk = undefined;
    }
  }

  private onPartHeaders(lines: string[]): boolean {
    const head = parsePartHead(lines);
    this.current = this.rules.admit(head);
    this.parts++;
    if (this.current !== 'stream') return this.current === 'body';
    this.streamFilename = head.filename;
    if (this.o.requireParts.has('body') && !this.rules.has('body')) throw missingPart('body');
    this.deliver();
    return false;
  }

  private onPartContent(buf: Buffer, from: number, to: number): void {
    if (this.current !== 'stream' || this.output === undefined) return;
    const limit = this.o.multipartByteLimit;
    this.streamBytes += to - from;
    // Never a byte past the limit, and never a silent cut: the stream errors instead.
    if (this.streamBytes > limit) throw streamTooLarge(limit);
    if (!this.output.push(ownedPiece(buf, from, to, buf === this.chunk))) this.req.pause();
  }

  private deliver(): void {
    const out = new Readable({
      // The consumer wants more: let the request flow again (after a failure it stays paused and unread).
      read: () => {
        if (!this.settled) this.req.resume();
      },
    });
    // Also keeps an error before the consumer listens from being an uncaught 'error' event.
    out.on('error', (e) => this.fail(e));
    out.on('close', () => {
      if (!out.readableEnded)
        this.fail(new UploadError('UPLOAD_ABORTED', 'the stream part was closed early'));
    });
    this.output = out;
    this.resolve({ kind: 'multipart', body: this.body, stream: out, streamFilename: this.streamFilename });
  }

  private complete(): void {
    if (this.settled) return;
    try {
      this.scanner.end();
    } catch (err) {
      return this.fail(err);
    }
    const absent = (['body', 'stream'] as const).find(
      (p) => this.o.requireParts.has(p) && !this.rules.has(p),
    );
    if (absent !== undefined) return this.fail(missingPart(absent));
    if (this.parts === 0) return this.fail(missingPart(undefined));
    this.settled = true;
    this.detach();
    if (this.output) this.output.push(null);
    else this.resolve({ kind: 'multipart', body: this.body, stream: undefined });
  }

  private detach(): void {
    this.unwatch();
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
  }

  fail(err: unknown): void {
    if (this.settled) return;
    const aborted = this.req.destroyed && !this.req.complete;
    const error = isUploadError(err) ? err : aborted ? abortedError(err) : malformed(err);
    this.settled = true;
    this.detach();
    this.req.pause();
    if (this.output) this.output.destroy(error);
    else this.reject(error);
  }
}

/**
 * Reads a `multipart/form-data` request. Resolves when the `stream` part starts (its content then streams
 * with backpressure) or, without a `stream` part, when the form is complete.
 */
export function readMultipart(
  req: IncomingMessage,
  boundary: string,
  byteCap: number,
  o: ResolvedOptions & { multipartByteLimit: number },
): Promise<Upload> {
  return new Promise<Upload>((resolve, reject) => {
    new MultipartSession(req, boundary, byteCap, o, resolve, reject).start();
  });
}
