import { OappError } from '../errors.js';

/** Pulls exact byte counts from an async or sync iterable of chunks, without reading ahead more than one chunk. */
export class ByteReader {
  private readonly it: AsyncIterator<Uint8Array> | Iterator<Uint8Array>;
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private done = false;
  /** Bytes consumed so far. */
  position = 0;

  constructor(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>) {
    this.it = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  }

  private async fill(n: number): Promise<boolean> {
    while (this.buffered < n && !this.done) {
      const r = await this.it.next();
      if (r.done === true) this.done = true;
      else if (!(r.value instanceof Uint8Array))
        throw new TypeError('package source: expected Uint8Array chunks');
      else if (r.value.length > 0) {
        this.chunks.push(r.value);
        this.buffered += r.value.length;
      }
    }
    return this.buffered >= n;
  }

  /** Up to `n` bytes (fewer only at the end of the input). */
  async readUpTo(n: number): Promise<Uint8Array> {
    await this.fill(n);
    return this.take(Math.min(n, this.buffered));
  }

  /**
   * Exactly `n` bytes.
   * @throws {@link OappError} `FORMAT_TRUNCATED` when the input ends first.
   */
  async readExact(n: number, what: string): Promise<Uint8Array> {
    if (!(await this.fill(n))) {
      throw new OappError(
        'FORMAT_TRUNCATED',
        `the package ends inside ${what} (offset ${this.position + this.buffered})`,
      );
    }
    return this.take(n);
  }

  /** True when no byte is left. */
  async atEnd(): Promise<boolean> {
    return !(await this.fill(1));
  }

  /** Stops reading the source (releases a file handle behind it). */
  async close(): Promise<void> {
    this.done = true;
    this.chunks = [];
    await this.it.return?.();
  }

  private take(n: number): Uint8Array {
    this.position += n;
    this.buffered -= n;
    const first = this.chunks[0];
    if (first !== undefined && first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return out;
    }
    const out = new Uint8Array(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length, n - off);
      out.set(c.subarray(0, k), off);
      off += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    return out;
  }
}
