import {
  AEAD_NONCE_BYTES,
  aeadDecrypt,
  aeadEncrypt,
  aeadEncryptInto,
  createSha256,
  hkdfSha256,
  type Engine,
} from '@org/envelope-crypto';
import { CHUNK_TAG_BYTES } from './constants.js';

// The payload STREAM (SPEC.md §4.6), after age's STREAM: the plaintext is cut into chunks of
// `chunkSize` bytes (the last may be shorter, and is empty only when the whole plaintext is
// empty); chunk i is sealed with ChaCha20-Poly1305 under the payload key with the nonce
// counter(i) as 11 big-endian bytes ‖ final flag (0x01 on the last chunk, else 0x00).

const PAYLOAD_INFO = new TextEncoder().encode('oapp/v1 payload key');

/** The payload key: HKDF-SHA-256(ikm = file key, salt = empty, info = "oapp/v1 payload key"), 32 bytes. */
export function derivePayloadKey(fileKey: Uint8Array): Uint8Array {
  return hkdfSha256(fileKey, new Uint8Array(0), PAYLOAD_INFO, 32);
}

/** Number of chunks for a plaintext size: at least one. */
export function chunkCount(plaintextSize: number, chunkSize: number): number {
  return plaintextSize === 0 ? 1 : Math.ceil(plaintextSize / chunkSize);
}

/** Exact PAYLOAD length for a plaintext size. */
export function payloadLength(plaintextSize: number, chunkSize: number): number {
  return plaintextSize + CHUNK_TAG_BYTES * chunkCount(plaintextSize, chunkSize);
}

/** Plaintext length of chunk `i` of `n`. */
export function chunkPlaintextLength(i: number, n: number, plaintextSize: number, chunkSize: number): number {
  return i < n - 1 ? chunkSize : plaintextSize - chunkSize * (n - 1);
}

/** The nonce of chunk `index`. */
export function chunkNonce(index: number, isFinal: boolean): Uint8Array {
  const nonce = new Uint8Array(AEAD_NONCE_BYTES);
  const view = new DataView(nonce.buffer);
  // 11-byte big-endian counter; indexes stay below 2^53, so the top three bytes are zero.
  view.setUint32(3, Math.floor(index / 2 ** 32));
  view.setUint32(7, index >>> 0);
  nonce[11] = isFinal ? 1 : 0;
  return nonce;
}

/** Seals a whole plaintext. Returns the PAYLOAD bytes and their SHA-256. */
export function sealPayload(
  payloadKey: Uint8Array,
  plaintext: Uint8Array,
  chunkSize: number,
  engine: Engine = 'native',
): { payload: Uint8Array; ciphertextSha256: Uint8Array } {
  const n = chunkCount(plaintext.length, chunkSize);
  const out = new Uint8Array(payloadLength(plaintext.length, chunkSize));
  const hash = createSha256();
  let inOff = 0;
  let outOff = 0;
  for (let i = 0; i < n; i++) {
    const len = chunkPlaintextLength(i, n, plaintext.length, chunkSize);
    const sealed = aeadEncrypt(
      payloadKey,
      chunkNonce(i, i === n - 1),
      plaintext.subarray(inOff, inOff + len),
      undefined,
      engine,
    );
    out.set(sealed, outOff);
    hash.update(sealed);
    inOff += len;
    outOff += sealed.length;
  }
  return { payload: out, ciphertextSha256: hash.digest() };
}

/**
 * Seals a whole plaintext into `out` from `offset` on (exactly {@link payloadLength} bytes), so a writer that
 * lays out the whole package in one buffer copies no payload byte twice. Returns the PAYLOAD's SHA-256.
 * @throws RangeError when `out` is too short (caller bug).
 */
export function sealPayloadInto(
  payloadKey: Uint8Array,
  plaintext: Uint8Array,
  chunkSize: number,
  out: Uint8Array,
  offset: number,
): Uint8Array {
  const n = chunkCount(plaintext.length, chunkSize);
  const hash = createSha256();
  let inOff = 0;
  let outOff = offset;
  for (let i = 0; i < n; i++) {
    const len = chunkPlaintextLength(i, n, plaintext.length, chunkSize);
    const written = aeadEncryptInto(
      payloadKey,
      chunkNonce(i, i === n - 1),
      plaintext.subarray(inOff, inOff + len),
      out,
      outOff,
      undefined,
      'native',
    );
    hash.update(out.subarray(outOff, outOff + written));
    inOff += len;
    outOff += written;
  }
  return hash.digest();
}

/**
 * Opens one sealed chunk. No plaintext is returned unless its tag verifies.
 * @throws `CryptoError` `CRYPTO_AUTH_FAILED`.
 */
export function openChunk(
  payloadKey: Uint8Array,
  index: number,
  isFinal: boolean,
  sealed: Uint8Array,
  engine: Engine = 'native',
): Uint8Array {
  return aeadDecrypt(payloadKey, chunkNonce(index, isFinal), sealed, undefined, engine);
}
