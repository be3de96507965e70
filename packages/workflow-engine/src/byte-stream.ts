import { Readable } from 'node:stream';
import { EngineError } from './errors.js';

/** Most bytes read ahead of the script: while it works on one read, the next one is already being received. */
export const MAX_READ_AHEAD_BYTES = 1024 * 1024;

/** `bytes` in a new ArrayBuffer of their own (not `slice`, which on a Buffer is a view). */
function copyOf(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

/** Bytes of one read, still in the chunks they arrived in: copied once, straight to where they are used. */
export class ByteChunks {
  /**
   * @param owned every chunk's ArrayBuffer belongs to this read alone (no other chunk, read or holder uses it):
   * the buffers may be moved (transferred) to another thread instead of copied.
   */
  constructor(
    readonly chunks: readonly Uint8Array[],
    readonly byteLength: number,
    readonly owned = false,
  ) {}

  /** The distinct ArrayBuffers of an `owned` read (to transfer); undefined when it is not owned. */
  buffers(): ArrayBuffer[] | undefined {
    if (!this.owned) return undefined;
    const seen = new Set<ArrayBuffer>();
    for (const c of this.chunks) {
      if (!(c.buffer instanceof ArrayBuffer) || c.buffer.byteLength === 0) return undefined;
      seen.add(c.buffer);
    }
    return [...seen];
  }

  /** Copies the bytes to `target` (at least `byteLength` long). */
  copyTo(target: Uint8Array): void {
    let off = 0;
    for (const c of this.chunks) {
      target.set(c, off);
      off += c.byteLength;
    }
  }

  /** The bytes in one new buffer of their own (transferable). */
  concat(): Uint8Array<ArrayBuffer> {
    // Never pooled, not zero-filled (every byte is written below): a buffer of exactly these bytes.
    const buf = Buffer.allocUnsafeSlow(this.byteLength);
    this.copyTo(buf);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }
}

/**
 * Reader over the step's input stream or a response body, serving `ByteReader.read(n)`.
 *
 * After a read of `n` bytes that the stream could fill, up to `min(n, MAX_READ_AHEAD_BYTES)` more are taken in
 * the background, so receiving (and parsing) the next bytes overlaps with the sandbox copying and using these.
 * Nothing is taken before the first read, and read-ahead never goes past what the script asked for last time.
 * A Node `Readable` is consumed chunk by chunk in flowing mode and paused at that mark (its async iterator would
 * join every buffered chunk into a new buffer first); any other async iterable is iterated. A failure of the
 * source, also one met while reading ahead, is thrown whenever more bytes are needed.
 *
 * `transferable`: the source promises that each chunk's ArrayBuffer is used by nothing else once delivered
 * (`StepInput.streamTransferable`). Reads then hand over whole chunks as `owned` (a chunk a read splits
 * has the part it returns copied, since the rest stays queued), so the sandbox worker gets them moved, not copied.
 */
export class ByteStream {
  private readonly chunks: Uint8Array[] = [];
  private buffered = 0;
  private iterator: AsyncIterator<Uint8Array> | undefined;
  private source: AsyncIterable<Uint8Array> | undefined;
  private inflight: Promise<boolean> | undefined;
  private failure: { error: Error } | undefined;
  /** Flowing mode (a Node Readable): listeners attached at the first read. */
  private readable: Readable | undefined;
  private attached = false;
  private ended = false;
  /** Bytes buffered beyond which the readable is paused. */
  private cap = 0;
  private waiter: ((what: 'data' | 'end' | 'error') => void) | undefined;

  private readonly transferable: boolean;

  /** Nothing is read from `source` until a script reads (a step that ignores the stream leaves it untouched). */
  constructor(
    source: AsyncIterable<Uint8Array> | Uint8Array | undefined,
    options: { transferable?: boolean } = {},
  ) {
    this.transferable = options.transferable === true;
    if (source instanceof Uint8Array) this.push(source);
    else if (source instanceof Readable) this.readable = source;
    else this.source = source;
  }

  /** Bytes available without waiting; pulls one chunk first when nothing is buffered. */
  async available(): Promise<number> {
    if (this.buffered === 0) await this.pull();
    return this.buffered;
  }

  /**
   * Up to `n` bytes (`n < 0`: everything). Returns fewer only at the end of the stream. A read that would return
   * more than `maxBytes` (the run's memory limit) fails instead, having buffered no more than `maxBytes + 1` bytes
   * (and one chunk) for it; it consumes nothing, so a smaller read can follow.
   *
   * @throws EngineError `ENGINE_MEMORY` when the bytes to return exceed `maxBytes` (SPEC.md §3.2); the source's
   *   error when it failed.
   */
  async read(n: number, maxBytes: number): Promise<ByteChunks> {
    const want = n < 0 ? Infinity : n;
    // One byte past the cap tells a read that is too large: an upload of any size is never buffered whole.
    const need = Math.min(want, maxBytes + 1);
    this.cap = need + Math.min(need, MAX_READ_AHEAD_BYTES);
    while (this.buffered < need && (await this.pull()));
    if (this.buffered > maxBytes && want > maxBytes)
      throw new EngineError('ENGINE_MEMORY', `stream read: more than ${maxBytes} bytes at once`);
    const out = this.take(Math.min(want, this.buffered));
    if (out.byteLength === want) this.readAhead(Math.min(want, MAX_READ_AHEAD_BYTES));
    return out;
  }

  private push(c: Uint8Array): void {
    if (c.byteLength === 0) return;
    this.chunks.push(c);
    this.buffered += c.byteLength;
  }

  /** One chunk more; false at the end. Never runs twice at once (a read may wait on a read-ahead pull). */
  private pull(): Promise<boolean> {
    if (this.failure) return Promise.reject(this.failure.error);
    if (this.readable) return this.pullFlowing(this.readable);
    this.inflight ??= this.pullOnce().then(
      (more) => {
        this.inflight = undefined;
        return more;
      },
      (cause: unknown) => {
        this.inflight = undefined;
        const error = cause instanceof Error ? cause : new Error(String(cause));
        this.failure = { error };
        throw error;
      },
    );
    return this.inflight;
  }

  /** Resolves true when bytes arrived, false at the end; the readable runs until `cap` bytes are buffered. */
  private pullFlowing(r: Readable): Promise<boolean> {
    this.attach(r);
    if (this.failure) return Promise.reject(this.failure.error);
    if (this.ended) return Promise.resolve(false);
    return new Promise<boolean>((resolve, reject) => {
      this.waiter = (what) => {
        this.waiter = undefined;
        if (what === 'error') reject(this.failure!.error);
        else resolve(what === 'data');
      };
      r.resume();
    });
  }

  private attach(r: Readable): void {
    if (this.attached) return;
    this.attached = true;
    // It may have ended, failed or been destroyed before the first read: those events are gone.
    const closed = (): void => {
      if (this.ended || this.failure) return;
      const error = r.errored ?? new Error('the stream was closed before its end');
      this.failure = { error: error instanceof Error ? error : new Error(String(error)) };
      this.waiter?.('error');
    };
    if (r.readableEnded) this.ended = true;
    else if (r.errored || r.destroyed) closed();
    r.once('close', closed);
    r.on('data', (c: Uint8Array) => {
      this.push(c);
      if (this.buffered >= this.cap) r.pause();
      this.waiter?.('data');
    });
    r.once('end', () => {
      this.ended = true;
      this.waiter?.('end');
    });
    r.once('error', (cause: unknown) => {
      this.failure = { error: cause instanceof Error ? cause : new Error(String(cause)) };
      this.waiter?.('error');
    });
  }

  private readAhead(target: number): void {
    if (this.readable) {
      // Flowing: let the readable run until `cap` (the bytes just read plus `target`) is reached again.
      if (!this.ended && !this.failure && this.buffered < target) this.readable.resume();
      return;
    }
    if (this.inflight || this.failure || !(this.source || this.iterator) || this.buffered >= target) return;
    this.pull().then(
      (more) => more && this.readAhead(target),
      () => undefined, // kept in `failure`; the next read throws it
    );
  }

  private async pullOnce(): Promise<boolean> {
    if (this.source) {
      this.iterator = this.source[Symbol.asyncIterator]();
      this.source = undefined;
    }
    if (!this.iterator) return false;
    const next = await this.iterator.next();
    if (next.done) {
      this.iterator = undefined;
      return false;
    }
    this.push(next.value instanceof Uint8Array ? next.value : new Uint8Array(0));
    return true;
  }

  /** The first `n` buffered bytes, as views of the chunks (the source never reuses a chunk it has given out). */
  private take(n: number): ByteChunks {
    const out: Uint8Array[] = [];
    let off = 0;
    while (off < n) {
      const c = this.chunks[0] as Uint8Array;
      const k = Math.min(c.byteLength, n - off);
      // A split chunk's buffer stays queued: transferable reads return a copy of its first part.
      out.push(k === c.byteLength ? c : this.transferable ? copyOf(c.subarray(0, k)) : c.subarray(0, k));
      off += k;
      if (k === c.byteLength) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.buffered -= n;
    return new ByteChunks(out, n, this.transferable && !this.sharesBuffer(out));
  }

  /** Whether a queued chunk shares an ArrayBuffer with `out` (a source breaking its promise): then it is copied. */
  private sharesBuffer(out: readonly Uint8Array[]): boolean {
    if (this.chunks.length === 0) return false;
    const taken = new Set(out.map((c) => c.buffer));
    return this.chunks.some((c) => taken.has(c.buffer));
  }
}
