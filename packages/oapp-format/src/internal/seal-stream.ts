import { aeadEncrypt, equalBytes, type Sha256Stream } from '@org/envelope-crypto';
import { CHUNK_TAG_BYTES, DEFAULT_MAX_PLAINTEXT_BYTES } from '../constants.js';
import { OappError } from '../errors.js';
import { chunkNonce } from '../payload.js';
import { ByteReader } from './byte-reader.js';

/** Content for a streaming writer: chunks of any size (a file read stream, a generator, an array). */
export type ContentSource = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

/** Running digests of one pass: SHA-256 of the plaintext and of the PAYLOAD value. */
export interface PassDigests {
  readonly content: Sha256Stream;
  readonly ciphertext: Sha256Stream;
}

function badContent(message: string): never {
  throw new OappError('FORMAT_BAD_ARGUMENT', message);
}

/**
 * Cuts `source` into payload chunks and seals each one (SPEC.md §4.6), yielding `chunk ‖ tag` in order.
 * Whether a chunk is the last one is learnt by looking one byte ahead, so the size need not be known;
 * when `expectedSize` is given, a source that yields more or fewer bytes fails before the chunk that
 * would disagree with it is sealed. Memory: one chunk plus whatever the source buffers.
 * @throws {@link OappError} `FORMAT_BAD_ARGUMENT` (size differs from `expectedSize`, or above the format's limit).
 */
export async function* sealChunks(
  source: ContentSource,
  payloadKey: Uint8Array,
  chunkSize: number,
  expectedSize: number | undefined,
  digests: PassDigests | undefined,
): AsyncGenerator<Uint8Array, number, undefined> {
  const r = new ByteReader(source);
  let total = 0;
  try {
    for (let i = 0; ; i++) {
      const plain = await r.readUpTo(chunkSize);
      const isFinal = await r.atEnd();
      total += plain.length;
      if (total > DEFAULT_MAX_PLAINTEXT_BYTES) badContent('content is larger than the format allows');
      if (expectedSize !== undefined && (isFinal ? total !== expectedSize : total >= expectedSize))
        badContent(`the content is not ${expectedSize} bytes long (it changed, or its size was wrong)`);
      digests?.content.update(plain);
      const sealed = aeadEncrypt(payloadKey, chunkNonce(i, isFinal), plain, undefined, 'native');
      digests?.ciphertext.update(sealed);
      yield sealed;
      if (isFinal) return total;
    }
  } finally {
    await r.close();
  }
}

/** The Poly1305 tags of a pass, 16 bytes per chunk in one growing buffer (no object per chunk). */
export class TagLog {
  private bytes = new Uint8Array(CHUNK_TAG_BYTES * 64);
  private count = 0;

  /** Records the tag of the next chunk (the last 16 bytes of `sealed`). */
  push(sealed: Uint8Array): void {
    if ((this.count + 1) * CHUNK_TAG_BYTES > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes.set(sealed.subarray(sealed.length - CHUNK_TAG_BYTES), this.count * CHUNK_TAG_BYTES);
    this.count++;
  }

  /** True when `sealed` carries the tag recorded for chunk `i`. */
  matches(i: number, sealed: Uint8Array): boolean {
    if (i >= this.count) return false;
    const tag = this.bytes.subarray(i * CHUNK_TAG_BYTES, (i + 1) * CHUNK_TAG_BYTES);
    return equalBytes(tag, sealed.subarray(sealed.length - CHUNK_TAG_BYTES));
  }
}
