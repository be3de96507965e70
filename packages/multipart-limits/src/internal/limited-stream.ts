import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { UploadError } from '../errors.js';
import type { UploadErrorCode } from '../errors.js';

/**
 * A pass-through that errors with `code` when more than `limit` bytes arrive, without ever passing on a byte
 * beyond the limit (never a silent cut), and that ends only after `gate` resolves: the delivered stream of a
 * multipart upload ends cleanly only when the whole form was valid (S25).
 */
export class LimitedStream extends Transform {
  private bytes = 0;

  constructor(
    private readonly limit: number,
    private readonly code: UploadErrorCode,
    private readonly what: string,
    private readonly gate: Promise<void> = Promise.resolve(),
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.bytes + chunk.length > this.limit) {
      callback(
        new UploadError(this.code, `${this.what} exceeds the limit of ${this.limit} bytes`, {
          details: { limit: this.limit },
        }),
      );
      return;
    }
    this.bytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.gate.then(
      () => callback(),
      (err: unknown) => callback(err as Error),
    );
  }
}
