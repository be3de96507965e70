/** How a `tcp` trigger cuts the byte stream into messages (docs/interfaces.md §4.4). */
export type Framing =
  | { readonly kind: 'fixed'; readonly length: number }
  | { readonly kind: 'delimiter'; readonly delimiter: Buffer; readonly strip: boolean };

/** A message longer than the limit: the connection is closed (S150). */
export class FrameTooLargeError extends Error {
  override readonly name = 'FrameTooLargeError';
}

/** Cuts one connection's bytes into messages, holding at most one partial message. */
export interface Framer {
  /** The complete messages the chunk finishes, in order. @throws FrameTooLargeError */
  push(chunk: Buffer): Buffer[];
  /** At the end of the stream: the unterminated rest as a last message (delimiter framing), or undefined. */
  flush(): Buffer | undefined;
  /** Bytes of the partial message held. */
  readonly pendingBytes: number;
}

/** Partial-message bytes kept as a list of chunks: joined once when the message is complete (linear time). */
class Pending {
  chunks: Buffer[] = [];
  bytes = 0;
  add(b: Buffer): void {
    if (b.length === 0) return;
    this.chunks.push(b);
    this.bytes += b.length;
  }
  take(last: Buffer): Buffer {
    const out = this.bytes === 0 ? Buffer.from(last) : Buffer.concat([...this.chunks, last]);
    this.chunks = [];
    this.bytes = 0;
    return out;
  }
}

class FixedFramer implements Framer {
  readonly #pending = new Pending();
  constructor(readonly length: number) {}
  get pendingBytes(): number {
    return this.#pending.bytes;
  }
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    while (chunk.length - at >= this.length - this.#pending.bytes) {
      const need = this.length - this.#pending.bytes;
      out.push(this.#pending.take(chunk.subarray(at, at + need)));
      at += need;
    }
    this.#pending.add(Buffer.from(chunk.subarray(at)));
    return out;
  }
  flush(): undefined {
    return undefined; // a partial fixed-length message is not a message
  }
}

class DelimiterFramer implements Framer {
  readonly #pending = new Pending();
  /** The last `delimiter.length - 1` bytes held, so a delimiter split across chunks is found. */
  #tail = Buffer.alloc(0);
  constructor(
    readonly delimiter: Buffer,
    readonly strip: boolean,
    readonly maxFrameBytes: number,
  ) {}
  get pendingBytes(): number {
    return this.#pending.bytes;
  }
  #emit(frame: Buffer): Buffer {
    const content = frame.length - this.delimiter.length;
    if (content > this.maxFrameBytes)
      throw new FrameTooLargeError(`message over ${this.maxFrameBytes} bytes`);
    return this.strip ? frame.subarray(0, content) : frame;
  }
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    const d = this.delimiter;
    const window = this.#tail.length > 0 ? Buffer.concat([this.#tail, chunk]) : chunk;
    const offset = this.#tail.length; // window index i is chunk index i - offset
    let from = 0;
    let consumed = 0; // chunk bytes already in emitted messages
    for (let at = window.indexOf(d, from); at >= 0; at = window.indexOf(d, from)) {
      const end = at - offset + d.length; // ≥ 1: a delimiter never lies wholly in the tail
      out.push(this.#emit(this.#pending.take(chunk.subarray(consumed, end))));
      consumed = end;
      from = at + d.length;
    }
    this.#pending.add(Buffer.from(chunk.subarray(consumed)));
    this.#tail = Buffer.from(window.subarray(Math.max(from, window.length - (d.length - 1))));
    // No delimiter can end a message of acceptable size any more.
    if (this.#pending.bytes > this.maxFrameBytes + d.length - 1)
      throw new FrameTooLargeError(`message over ${this.maxFrameBytes} bytes`);
    return out;
  }
  flush(): Buffer | undefined {
    if (this.#pending.bytes === 0) return undefined;
    const rest = this.#pending.take(Buffer.alloc(0));
    if (rest.length > this.maxFrameBytes)
      throw new FrameTooLargeError(`message over ${this.maxFrameBytes} bytes`);
    return rest;
  }
}

/** A framer for one connection. */
export function createFramer(framing: Framing, maxFrameBytes: number): Framer {
  return framing.kind === 'fixed'
    ? new FixedFramer(framing.length)
    : new DelimiterFramer(framing.delimiter, framing.strip, maxFrameBytes);
}
