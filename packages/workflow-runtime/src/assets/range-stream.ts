import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** Chunk size of a range read: one positional read per chunk. */
export const RANGE_CHUNK_BYTES = 64 * 1024;

/**
 * A byte range of a file as a stream, read through the FileHandle. Unlike `fs.createReadStream`, destroying it
 * never closes the file (Node closes a stream's fd on destroy even with `autoClose: false`), and reads through
 * the handle fail cleanly once it is closed instead of reaching a reused descriptor.
 */
export class RangeStream extends Readable {
  #position: number;
  readonly #end: number;

  /** Reads `[start, end)` of `handle`. */
  constructor(
    private readonly handle: FileHandle,
    start: number,
    end: number,
  ) {
    super({ highWaterMark: RANGE_CHUNK_BYTES });
    this.#position = start;
    this.#end = end;
  }

  override _read(size: number): void {
    const length = Math.min(size, RANGE_CHUNK_BYTES, this.#end - this.#position);
    if (length <= 0) {
      this.push(null);
      return;
    }
    const buffer = Buffer.allocUnsafe(length);
    this.handle.read(buffer, 0, length, this.#position).then(
      ({ bytesRead }) => {
        if (this.destroyed) return;
        if (bytesRead === 0) return this.destroy(new Error('unexpected end of file'));
        this.#position += bytesRead;
        this.push(bytesRead < length ? buffer.subarray(0, bytesRead) : buffer);
      },
      (err: Error) => this.destroy(err),
    );
  }
}
