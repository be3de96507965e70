import { createCipheriv, createDecipheriv } from 'node:crypto';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { assertBytes } from './bytes.js';
import { CryptoError } from './errors.js';
import { defaultEngine, type Engine } from './internal/engine.js';

/** ChaCha20-Poly1305 (RFC 8439) key, nonce and tag sizes. */
export const AEAD_KEY_BYTES = 32;
/** ChaCha20-Poly1305 nonce size. */
export const AEAD_NONCE_BYTES = 12;
/** ChaCha20-Poly1305 tag size. */
export const AEAD_TAG_BYTES = 16;

const EMPTY = new Uint8Array(0);

// `engine: 'sodium'` runs node:crypto here: libsodium's ChaCha20-Poly1305 was ~5x faster for
// 64-byte messages but ~35% slower at 64 KiB on our machines (ADR 0008), and the AEAD carries bulk data.

/**
 * ChaCha20-Poly1305 (RFC 8439, IETF) encryption. Output: ciphertext ‖ tag (16), as libsodium's
 * `crypto_aead_chacha20poly1305_ietf_encrypt`.
 */
export function aeadEncrypt(
  key: Uint8Array,
  nonce: Uint8Array,
  plaintext: Uint8Array,
  aad: Uint8Array = EMPTY,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(key, AEAD_KEY_BYTES, 'key');
  assertBytes(nonce, AEAD_NONCE_BYTES, 'nonce');
  assertBytes(plaintext, undefined, 'plaintext');
  if (engine === 'js') return chacha20poly1305(key, nonce, aad).encrypt(plaintext);
  const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: AEAD_TAG_BYTES });
  c.setAAD(aad, { plaintextLength: plaintext.length });
  const out = new Uint8Array(plaintext.length + AEAD_TAG_BYTES);
  const body = c.update(plaintext);
  out.set(body, 0);
  const fin = c.final();
  out.set(fin, body.length);
  out.set(c.getAuthTag(), plaintext.length);
  return out;
}

/**
 * {@link aeadEncrypt} writing `ciphertext ‖ tag` into `out` at `offset` instead of a new array (a writer that
 * lays many chunks out in one buffer saves a copy of every byte). Returns the number of bytes written
 * (`plaintext.length + 16`).
 * @throws RangeError when `out` has no room for them at `offset`.
 */
export function aeadEncryptInto(
  key: Uint8Array,
  nonce: Uint8Array,
  plaintext: Uint8Array,
  out: Uint8Array,
  offset: number,
  aad: Uint8Array = EMPTY,
  engine: Engine = defaultEngine(),
): number {
  assertBytes(out, undefined, 'out');
  const total = plaintext.length + AEAD_TAG_BYTES;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset + total > out.length)
    throw new RangeError(
      `out: expected room for ${total} bytes at offset ${offset}, got length ${out.length}`,
    );
  if (engine === 'js') {
    out.set(aeadEncrypt(key, nonce, plaintext, aad, engine), offset);
    return total;
  }
  assertBytes(key, AEAD_KEY_BYTES, 'key');
  assertBytes(nonce, AEAD_NONCE_BYTES, 'nonce');
  assertBytes(plaintext, undefined, 'plaintext');
  const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: AEAD_TAG_BYTES });
  c.setAAD(aad, { plaintextLength: plaintext.length });
  const body = c.update(plaintext);
  out.set(body, offset);
  const fin = c.final();
  out.set(fin, offset + body.length);
  out.set(c.getAuthTag(), offset + plaintext.length);
  return total;
}

/**
 * ChaCha20-Poly1305 decryption. No plaintext is returned unless the tag verifies; on failure the
 * partial output is wiped.
 * @throws {@link CryptoError} `CRYPTO_AUTH_FAILED`.
 */
export function aeadDecrypt(
  key: Uint8Array,
  nonce: Uint8Array,
  sealed: Uint8Array,
  aad: Uint8Array = EMPTY,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(key, AEAD_KEY_BYTES, 'key');
  assertBytes(nonce, AEAD_NONCE_BYTES, 'nonce');
  assertBytes(sealed, undefined, 'sealed');
  if (sealed.length < AEAD_TAG_BYTES) throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed');
  if (engine === 'js') {
    try {
      return chacha20poly1305(key, nonce, aad).decrypt(sealed);
    } catch (cause) {
      throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed', { cause });
    }
  }
  const n = sealed.length - AEAD_TAG_BYTES;
  const d = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: AEAD_TAG_BYTES });
  d.setAAD(aad, { plaintextLength: n });
  d.setAuthTag(sealed.subarray(n));
  const body = d.update(sealed.subarray(0, n));
  try {
    d.final(); // verifies the tag; nothing is released before this returns
  } catch (cause) {
    body.fill(0);
    throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed', { cause });
  }
  // node:crypto hands back a Buffer over a fresh ArrayBuffer of exactly n bytes: returned as a Uint8Array view of
  // it, without copying the plaintext. Anything else (a pooled or larger buffer) is copied, so the returned
  // array's buffer never holds bytes beyond the plaintext.
  if (body.byteOffset === 0 && body.buffer.byteLength === n) return new Uint8Array(body.buffer, 0, n);
  const out = new Uint8Array(n);
  out.set(body);
  body.fill(0);
  return out;
}
