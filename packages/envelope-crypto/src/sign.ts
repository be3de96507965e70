import { sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { assertBytes } from './bytes.js';
import { passesStrictPrechecks, verifyEd25519Js } from './internal/curve25519.js';
import { nativePublicKey, nativeSecretKey } from './internal/native.js';
import { defaultEngine, sodiumFor, type Engine } from './internal/engine.js';

/** Ed25519 signature size in bytes. */
export const SIGNATURE_BYTES = 64;

export { defaultEngine };
export type { Engine };

/**
 * Detached Ed25519 signature, byte-identical to libsodium `crypto_sign_detached`.
 * @param secretKey - the 64-byte libsodium sign secret key (seed ‖ public key); validate it with
 *   `parseKey` first, which checks the public half against the seed.
 */
export function signDetached(
  message: Uint8Array,
  secretKey: Uint8Array,
  engine: Engine = defaultEngine(),
): Uint8Array {
  assertBytes(message, undefined, 'message');
  assertBytes(secretKey, 64, 'secretKey');
  const seed = secretKey.subarray(0, 32);
  if (engine === 'js') return ed25519.sign(message, seed);
  const s = sodiumFor(engine);
  if (s !== undefined) {
    // libsodium hashes the public half of the 64-byte key as given; signing one message under two
    // different public halves would reveal the secret scalar. Like the other engines, sign with
    // the key derived from the seed alone (crypto_sign_seed_keypair, ~15 µs), then wipe it.
    const pk = new Uint8Array(32);
    const sk = new Uint8Array(64);
    const sig = new Uint8Array(SIGNATURE_BYTES);
    try {
      s.crypto_sign_seed_keypair(pk, sk, seed);
      s.crypto_sign_detached(sig, message, sk);
    } finally {
      s.sodium_memzero(sk);
    }
    return sig;
  }
  return new Uint8Array(nodeSign(null, message, nativeSecretKey('ed25519', seed)));
}

/**
 * Strict Ed25519 verification with the same accept set as libsodium 1.0.18+
 * `crypto_sign_verify_detached`: S < L, R and A not small-order, A canonical, cofactorless
 * equation. Returns `false` for any invalid signature; it is a predicate and never throws on
 * signature content. One rule everywhere: packager, inspect and agent all call this.
 */
export function verifyDetached(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
  engine: Engine = defaultEngine(),
): boolean {
  assertBytes(signature, SIGNATURE_BYTES, 'signature');
  assertBytes(message, undefined, 'message');
  assertBytes(publicKey, 32, 'publicKey');
  if (engine === 'js') return verifyEd25519Js(signature, message, publicKey);
  // libsodium's own crypto_sign_verify_detached: the rule the other two engines reproduce.
  const s = sodiumFor(engine);
  if (s !== undefined) return s.crypto_sign_verify_detached(signature, message, publicKey);
  // OpenSSL's verifier compares the recomputed R byte for byte (cofactorless) and checks S < L;
  // the prechecks add libsodium's canonical and small-order rules it lacks.
  if (!passesStrictPrechecks(signature, publicKey)) return false;
  try {
    return nodeVerify(null, message, nativePublicKey('ed25519', publicKey), signature);
  } catch {
    return false;
  }
}
