import { diffieHellman } from 'node:crypto';
import { x25519 } from '@noble/curves/ed25519.js';
import { hsalsa, xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { assertBytes, concatBytes, randomBytes, wipe } from './bytes.js';
import { CryptoError } from './errors.js';
import { hasSmallOrderMontgomeryEncoding } from './internal/curve25519.js';
import { nativePublicKey, nativeSecretKey } from './internal/native.js';
import type { Sodium } from './internal/sodium.js';
import { x25519PublicFromSecret } from './keys.js';
import { defaultEngine, sodiumFor, type Engine } from './internal/engine.js';

/** crypto_box / crypto_secretbox nonce size. */
export const BOX_NONCE_BYTES = 24;
/** Poly1305 tag size (the `easy` layout puts it first). */
export const BOX_MAC_BYTES = 16;
/** crypto_box_seal overhead: ephemeral public key + MAC. */
export const SEAL_BYTES = 48;

const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]); // "expand 32-byte k"

function scalarmultSodium(sodium: Sodium, secretKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  const shared = new Uint8Array(32);
  sodium.crypto_scalarmult(shared, secretKey, publicKey); // throws where libsodium returns -1
  return shared;
}

function isAllZero(b: Uint8Array): boolean {
  let acc = 0;
  for (const x of b) acc |= x;
  return acc === 0;
}

/**
 * X25519 shared secret. A small-order public key or an all-zero result is rejected (libsodium's
 * `crypto_scalarmult` returns -1 for both).
 * @throws {@link CryptoError} `CRYPTO_WEAK_KEY`.
 */
export function x25519SharedSecret(
  secretKey: Uint8Array,
  publicKey: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(secretKey, 32, 'secretKey');
  assertBytes(publicKey, 32, 'publicKey');
  if (hasSmallOrderMontgomeryEncoding(publicKey))
    throw new CryptoError('CRYPTO_WEAK_KEY', 'small-order X25519 public key');
  // Resolved outside the try: an unavailable engine is a caller error, not a weak key.
  const sodium = sodiumFor(engine);
  let shared: Uint8Array;
  try {
    shared =
      engine === 'js'
        ? x25519.getSharedSecret(secretKey, publicKey)
        : sodium !== undefined
          ? scalarmultSodium(sodium, secretKey, publicKey)
          : new Uint8Array(
              diffieHellman({
                privateKey: nativeSecretKey('x25519', secretKey),
                publicKey: nativePublicKey('x25519', publicKey),
              }),
            );
  } catch (cause) {
    throw new CryptoError('CRYPTO_WEAK_KEY', 'X25519 agreement failed (all-zero shared secret)', { cause });
  }
  if (isAllZero(shared)) throw new CryptoError('CRYPTO_WEAK_KEY', 'all-zero X25519 shared secret');
  return shared;
}

/**
 * `crypto_box_beforenm`: HSalsa20(shared secret, 16 zero bytes). sodium-native exposes neither
 * crypto_box_beforenm nor HSalsa20, so every engine runs this one-block core in noble (~1 µs).
 * @throws {@link CryptoError} `CRYPTO_WEAK_KEY`.
 */
export function boxBeforeNm(
  publicKey: Uint8Array,
  secretKey: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  const shared = x25519SharedSecret(secretKey, publicKey, engine);
  const k = new Uint32Array(shared.buffer, shared.byteOffset, 8);
  const out = new Uint32Array(8);
  hsalsa(SIGMA, k, new Uint32Array(4), out);
  wipe(shared);
  return new Uint8Array(out.buffer);
}

/** `crypto_box_easy_afternm` / `crypto_secretbox_easy`: MAC ‖ ciphertext under a 32-byte key. */
export function secretboxEasy(
  message: Uint8Array,
  nonce: Uint8Array,
  key: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(message, undefined, 'message');
  assertBytes(nonce, BOX_NONCE_BYTES, 'nonce');
  assertBytes(key, 32, 'key');
  const sodium = sodiumFor(engine);
  if (sodium !== undefined) {
    const out = new Uint8Array(message.length + BOX_MAC_BYTES);
    sodium.crypto_secretbox_easy(out, message, nonce, key);
    return out;
  }
  return xsalsa20poly1305(key, nonce).encrypt(message);
}

/**
 * `crypto_secretbox_open_easy`: the tag is verified before any plaintext is produced.
 * @throws {@link CryptoError} `CRYPTO_AUTH_FAILED` (also for input shorter than the MAC).
 */
export function secretboxOpenEasy(
  box: Uint8Array,
  nonce: Uint8Array,
  key: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(box, undefined, 'box');
  assertBytes(nonce, BOX_NONCE_BYTES, 'nonce');
  assertBytes(key, 32, 'key');
  if (box.length < BOX_MAC_BYTES) throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed');
  const sodium = sodiumFor(engine);
  if (sodium !== undefined) {
    const out = new Uint8Array(box.length - BOX_MAC_BYTES);
    // libsodium verifies the tag before it decrypts: on failure `out` was never written.
    if (!sodium.crypto_secretbox_open_easy(out, box, nonce, key))
      throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed');
    return out;
  }
  try {
    return xsalsa20poly1305(key, nonce).decrypt(box);
  } catch (cause) {
    throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed', { cause });
  }
}

/**
 * `crypto_box_easy(message, nonce, recipientPublicKey, senderSecretKey)`.
 * @throws {@link CryptoError} `CRYPTO_WEAK_KEY`.
 */
export function boxEasy(
  message: Uint8Array,
  nonce: Uint8Array,
  recipientPublicKey: Uint8Array,
  senderSecretKey: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  const k = boxBeforeNm(recipientPublicKey, senderSecretKey, engine);
  try {
    return secretboxEasy(message, nonce, k, engine);
  } finally {
    wipe(k);
  }
}

/**
 * `crypto_box_open_easy(box, nonce, senderPublicKey, recipientSecretKey)`.
 * @throws {@link CryptoError} `CRYPTO_WEAK_KEY`, `CRYPTO_AUTH_FAILED`.
 */
export function boxOpenEasy(
  box: Uint8Array,
  nonce: Uint8Array,
  senderPublicKey: Uint8Array,
  recipientSecretKey: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  const k = boxBeforeNm(senderPublicKey, recipientSecretKey, engine);
  try {
    return secretboxOpenEasy(box, nonce, k, engine);
  } finally {
    wipe(k);
  }
}

function sealNonce(ephemeralPublicKey: Uint8Array, recipientPublicKey: Uint8Array): Uint8Array {
  return blake2b(concatBytes(ephemeralPublicKey, recipientPublicKey), { dkLen: BOX_NONCE_BYTES });
}

/**
 * `crypto_box_seal`: anonymous sender. Output: ephemeral public key (32) ‖ crypto_box_easy.
 * @throws {@link CryptoError} `CRYPTO_WEAK_KEY`.
 */
export function sealedBoxSeal(
  message: Uint8Array,
  recipientPublicKey: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(recipientPublicKey, 32, 'recipientPublicKey');
  const sodium = sodiumFor(engine);
  if (sodium !== undefined) {
    assertBytes(message, undefined, 'message');
    if (hasSmallOrderMontgomeryEncoding(recipientPublicKey))
      throw new CryptoError('CRYPTO_WEAK_KEY', 'small-order X25519 public key');
    const out = new Uint8Array(message.length + SEAL_BYTES);
    try {
      sodium.crypto_box_seal(out, message, recipientPublicKey); // wipes its ephemeral secret itself
    } catch (cause) {
      throw new CryptoError('CRYPTO_WEAK_KEY', 'X25519 agreement failed (all-zero shared secret)', { cause });
    }
    return out;
  }
  const esk = randomBytes(32);
  try {
    const epk = x25519PublicFromSecret(esk, engine);
    return concatBytes(
      epk,
      boxEasy(message, sealNonce(epk, recipientPublicKey), recipientPublicKey, esk, engine),
    );
  } finally {
    wipe(esk);
  }
}

/**
 * `crypto_box_seal_open`.
 * @throws {@link CryptoError} `CRYPTO_AUTH_FAILED` (also for input shorter than 48 bytes or a weak
 *   ephemeral key: an anonymous box that cannot be opened is one failure class).
 */
export function sealedBoxOpen(
  sealed: Uint8Array,
  recipientPublicKey: Uint8Array,
  recipientSecretKey: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(sealed, undefined, 'sealed');
  assertBytes(recipientPublicKey, 32, 'recipientPublicKey');
  if (sealed.length < SEAL_BYTES) throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed');
  const sodium = sodiumFor(engine);
  if (sodium !== undefined) {
    assertBytes(recipientSecretKey, 32, 'secretKey');
    const out = new Uint8Array(sealed.length - SEAL_BYTES);
    // -1 for a bad tag and for a weak ephemeral key alike: one failure class, as below.
    if (!sodium.crypto_box_seal_open(out, sealed, recipientPublicKey, recipientSecretKey))
      throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed');
    return out;
  }
  const epk = sealed.subarray(0, 32);
  try {
    return boxOpenEasy(
      sealed.subarray(32),
      sealNonce(epk, recipientPublicKey),
      epk,
      recipientSecretKey,
      engine,
    );
  } catch (err) {
    if (err instanceof CryptoError && err.code === 'CRYPTO_WEAK_KEY') {
      throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed', { cause: err });
    }
    throw err;
  }
}
