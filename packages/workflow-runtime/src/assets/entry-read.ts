import { Transform, type Duplex, type Readable, type TransformCallback } from 'node:stream';
import { createInflateRaw, inflateRaw } from 'node:zlib';
import type { AssetEntry } from './validate-zip.js';

/** Where an entry's compressed bytes come from: a tracked range of the zip file. */
export interface RangeSource {
  range(start: number, end: number): Readable;
}

/** Passes exactly `size` bytes: more, or fewer at the end, is an error (the zip changed under the server). */
class ExactSize extends Transform {
  #seen = 0;
  constructor(private readonly size: number) {
    super();
  }
  override _transform(chunk: Buffer, _: BufferEncoding, callback: TransformCallback): void {
    this.#seen += chunk.length;
    callback(this.#seen > this.size ? new Error('the entry inflates past its size') : null, chunk);
  }
  override _flush(callback: TransformCallback): void {
    callback(this.#seen < this.size ? new Error('the entry ends before its size') : null);
  }
}

/**
 * A large entry as a stream: its compressed range (tracked, so closing the archive ends it), inflated when
 * deflated, with its size enforced. Memory is bounded by the streams' buffers (64 KiB chunks).
 */
export function entryStream(reader: RangeSource, entry: AssetEntry): Readable {
  const raw = reader.range(entry.dataStart, entry.dataStart + entry.compressedSize);
  if (entry.method === 0) return raw; // a short file is an error of the range stream itself
  return chain(raw, createInflateRaw({ chunkSize: 64 * 1024 }), new ExactSize(entry.size));
}

/**
 * Pipes the stages and returns the last: an error in any stage destroys the last with it, and closing the last
 * (done, failed, or a client that went away) destroys the others. Not `stream.pipeline`, which creates an
 * AbortController and a DOMException per call: measurable at thousands of responses a second.
 */
function chain(first: Readable, ...rest: Duplex[]): Readable {
  const stages: Readable[] = [first, ...rest];
  const last = stages.at(-1)!;
  stages.slice(0, -1).forEach((stage, i) => {
    stage.pipe(rest[i]!);
    stage.once('error', (err) => last.destroy(err));
  });
  last.once('close', () => {
    for (const stage of stages) if (!stage.destroyed) stage.destroy();
  });
  return last;
}

export function inflateSmall(compressed: Buffer, size: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    inflateRaw(compressed, { maxOutputLength: Math.max(size, 1) }, (err, out) =>
      err ? reject(err) : resolve(out),
    ),
  );
}
