import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Busboy, FileInfo, FieldInfo } from 'busboy';
import { UploadError, isUploadError } from '../errors.js';
import type { ResolvedOptions } from '../options.js';
import type { Upload } from '../upload.js';
import { FormGuard, busboyLimits } from './form-guard.js';
import { LimitedStream } from './limited-stream.js';
import { abortedError, watchRequest } from './request-watch.js';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // observed through the delivered stream; never an unhandled rejection
  return { promise, resolve, reject };
}

function malformed(cause?: unknown): UploadError {
  return new UploadError('UPLOAD_MALFORMED', 'the multipart body is malformed', { cause });
}

/**
 * One multipart upload: request → {@link FormGuard} (cap, framing, part rules, exact `body` capture) →
 * busboy (file data) → {@link LimitedStream} (the delivered `stream`). The first failure wins; after it every
 * stream is unpiped or destroyed and every listener added to the request is removed. The request itself is
 * left to the caller, which answers with `Connection: close`.
 */
class MultipartSession {
  private settled: { error?: Error } | undefined;
  private resolved = false;
  private output: LimitedStream | undefined;
  private busboyParts = 0;
  private readonly formDone = deferred();
  private readonly guard: FormGuard;
  private readonly bb: Busboy;
  private readonly unwatch: () => void;

  constructor(
    private readonly req: IncomingMessage,
    boundary: string,
    byteCap: number,
    private readonly o: ResolvedOptions & { multipartByteLimit: number },
    private readonly resolve: (u: Upload) => void,
    private readonly reject: (e: Error) => void,
  ) {
    this.guard = new FormGuard(boundary, byteCap, o.bodyFieldByteLimit);
    this.bb = this.createBusboy();
    this.unwatch = watchRequest(req, o.signal, (e) => this.fail(e));
  }

  start(): void {
    this.guard.on('error', (e) => this.fail(e));
    this.bb.on('error', (e) => this.fail(e));
    this.bb.on('file', (name: string, file: Readable, info: FileInfo) => this.onFile(name, file, info));
    this.bb.on('field', (name: string, _value: string, info: FieldInfo) => this.onField(name, info));
    for (const event of ['partsLimit', 'filesLimit', 'fieldsLimit']) {
      this.bb.on(event, () =>
        this.fail(new UploadError('UPLOAD_PARTS_LIMIT', 'the form has too many parts')),
      );
    }
    pipeline(this.guard, this.bb, (err) => (err ? this.fail(err) : this.complete()));
    // `pipe`, not `pipeline`, for the request: pipeline would destroy the request (and its socket) on failure,
    // leaving the app no way to answer 413/400. fail() unpipes and pauses it instead.
    this.req.pipe(this.guard);
  }

  private createBusboy(): Busboy {
    try {
      return busboy({
        headers: this.req.headers,
        limits: busboyLimits(this.o.multipartByteLimit, this.o.bodyFieldByteLimit),
        defCharset: 'latin1', // the body value comes from the guard's exact capture, not from busboy
      });
    } catch (cause) {
      // S24: the constructor throws on a content type it cannot use; planUpload refuses these first.
      throw new UploadError('UPLOAD_BAD_BOUNDARY', 'the multipart content type cannot be parsed', { cause });
    }
  }

  /** Cross-checks busboy's view of part `busboyParts` against the guard's; any difference is malformed. */
  private crossCheck(name: string, isFile: boolean): boolean {
    const head = this.guard.heads[this.busboyParts++];
    if (head !== undefined && head.name === name && head.isFile === isFile) return true;
    this.fail(malformed());
    return false;
  }

  private onField(name: string, info: FieldInfo): void {
    if (!this.crossCheck(name, false)) return;
    if (info.valueTruncated || info.nameTruncated) this.fail(malformed());
  }

  private onFile(name: string, file: Readable, _info: FileInfo): void {
    file.on('error', (e) => this.fail(e));
    if (!this.crossCheck(name, true) || this.settled) {
      file.resume();
      return;
    }
    if (this.o.requireParts.has('body') && !this.guard.rules.has('body')) {
      this.fail(missing('body'));
      file.resume();
      return;
    }
    this.deliver(file);
  }

  private deliver(file: Readable): void {
    const limit = this.o.multipartByteLimit;
    const out = new LimitedStream(limit, 'UPLOAD_FILE_TOO_LARGE', 'the stream part', this.formDone.promise);
    this.output = out;
    file.on('limit', () => this.fail(fileTooLarge(limit)));
    out.on('error', (e) => this.fail(e));
    out.on('close', () => {
      if (!out.readableEnded)
        this.fail(new UploadError('UPLOAD_ABORTED', 'the stream part was closed early'));
    });
    file.pipe(out);
    this.resolved = true;
    this.resolve({ kind: 'multipart', body: this.guard.body, stream: out });
  }

  private complete(): void {
    if (this.settled) return;
    if (this.busboyParts !== this.guard.heads.length) return this.fail(malformed());
    const absent = (['body', 'stream'] as const).find(
      (p) => this.o.requireParts.has(p) && !this.guard.rules.has(p),
    );
    if (absent !== undefined) return this.fail(missing(absent));
    if (this.guard.heads.length === 0) return this.fail(missing(undefined));
    this.settled = {};
    this.unwatch();
    this.formDone.resolve();
    if (!this.resolved) this.resolve({ kind: 'multipart', body: this.guard.body, stream: undefined });
  }

  fail(err: unknown): void {
    if (this.settled) return;
    const aborted = this.req.destroyed && !this.req.complete;
    const error = isUploadError(err) ? err : aborted ? abortedError(err) : malformed(err);
    this.settled = { error };
    this.unwatch();
    this.req.unpipe(this.guard);
    this.req.pause();
    // Deferred: busboy calls our listeners mid-parse and keeps using its state after they return (destroying
    // it synchronously inside a 'limit' listener makes busboy throw a TypeError).
    process.nextTick(() => {
      this.guard.destroy();
      this.bb.destroy();
    });
    this.formDone.reject(error);
    if (this.resolved) this.output?.destroy(error);
    else this.reject(error);
  }
}

/** `part` undefined: the form has neither part (interfaces §6.2: nothing to process). */
function missing(part: 'body' | 'stream' | undefined): UploadError {
  const what = part === undefined ? 'neither a body nor a stream part' : `no ${part} part`;
  return new UploadError('UPLOAD_MISSING_PART', `the form has ${what}`, {
    details: { parts: part === undefined ? ['body', 'stream'] : [part] },
  });
}

function fileTooLarge(limit: number): UploadError {
  return new UploadError('UPLOAD_FILE_TOO_LARGE', `the stream part exceeds the limit of ${limit} bytes`, {
    details: { limit },
  });
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
