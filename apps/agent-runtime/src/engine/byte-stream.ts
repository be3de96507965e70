/** Pull-based reader over the step's input stream or a response body, serving `ByteReader.read(n)`. */
export class ByteStream {
  private readonly chunks: Uint8Array[] = [];
  private buffered = 0;
  private iterator: AsyncIterator<Uint8Array> | undefined;
  private source: AsyncIterable<Uint8Array> | undefined;

  /** Nothing is read from `source` until a script reads (a step that ignores the stream leaves it untouched). */
  constructor(source: AsyncIterable<Uint8Array> | Uint8Array | undefined) {
    if (source instanceof Uint8Array) this.push(source);
    else this.source = source;
  }

  /** Bytes available without waiting; pulls one chunk first when nothing is buffered. */
  async available(): Promise<number> {
    if (this.buffered === 0) await this.pull();
    return this.buffered;
  }

  /**
   * Up to `n` bytes (`n < 0`: everything). Returns fewer only at the end of the stream.
   *
   * @throws RangeError when the bytes to return exceed `maxBytes`.
   */
  async read(n: number, maxBytes: number): Promise<Uint8Array> {
    const want = n < 0 ? Infinity : n;
    while (this.buffered < want && (await this.pull()));
    if (n < 0 && this.buffered > maxBytes)
      throw new RangeError(`the stream is larger than ${maxBytes} bytes`);
    return this.take(Math.min(want, this.buffered, maxBytes));
  }

  private push(c: Uint8Array): void {
    if (c.byteLength === 0) return;
    this.chunks.push(c);
    this.buffered += c.byteLength;
  }

  private async pull(): Promise<boolean> {
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

  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0] as Uint8Array;
      const k = Math.min(c.byteLength, n - off);
      out.set(c.subarray(0, k), off);
      off += k;
      if (k === c.byteLength) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.buffered -= n;
    return out;
  }
}
