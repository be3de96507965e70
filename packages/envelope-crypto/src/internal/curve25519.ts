import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { concatBytes, equalBytes } from '../bytes.js';
import { decodeHex } from '../encoding.js';

// Encoding checks shared by Ed25519 verification and X25519 key registration. They mirror
// libsodium 1.0.18+ (`ge25519_is_canonical`, `ge25519_has_small_order`,
// `crypto_scalarmult_curve25519` blacklist), so that we reject exactly what libsodium rejects.

const P = 2n ** 255n - 19n;
const MASK_255 = 2n ** 255n - 1n;
/** Order of the Ed25519 prime subgroup. */
export const ED25519_L = 2n ** 252n + 27742317777372353535851937790883648493n;

function le(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] ?? 0);
  return n;
}

/** The 255-bit coordinate of an encoding, ignoring the top (sign) bit. */
function coordinate(enc: Uint8Array): bigint {
  return le(enc) & MASK_255;
}

// y-coordinates of the eight small-order Edwards points, plus the non-canonical p and p+1.
const SMALL_ORDER_Y = new Set<bigint>([
  ...ED25519_TORSION_SUBGROUP.map((h) => coordinate(decodeHex(h, 32))),
  P,
  P + 1n,
]);

// u-coordinates of the small-order Montgomery points (libsodium's scalarmult blacklist).
const SMALL_ORDER_U = new Set<bigint>([
  0n,
  1n,
  325606250916557431795983626356110631294008115727848805560023387167927233504n,
  39382357235489614581723060781553021112529911719440698176882885853963445705823n,
  P - 1n,
  P,
  P + 1n,
]);

/** True when an Ed25519 point encoding has y < p (the sign bit may be either). */
export function isCanonicalEdwardsEncoding(enc: Uint8Array): boolean {
  return coordinate(enc) < P;
}

/** True when an Ed25519 encoding names a small-order point (libsodium's blacklist, sign bit ignored). */
export function hasSmallOrderEdwardsEncoding(enc: Uint8Array): boolean {
  return SMALL_ORDER_Y.has(coordinate(enc));
}

/** True when an X25519 public key is canonical: top bit clear and u < p. */
export function isCanonicalMontgomeryEncoding(enc: Uint8Array): boolean {
  return (enc[31] ?? 0) < 0x80 && le(enc) < P;
}

/** True when an X25519 public key is a small-order point, so every shared secret with it is zero. */
export function hasSmallOrderMontgomeryEncoding(enc: Uint8Array): boolean {
  return SMALL_ORDER_U.has(coordinate(enc));
}

/** True when the S half of a signature is a canonical scalar (S < L). */
export function isCanonicalScalar(s: Uint8Array): boolean {
  return le(s) < ED25519_L;
}

/**
 * Checks that libsodium performs before the verification equation. Both the pure-JS and the
 * native verifier run these first.
 */
export function passesStrictPrechecks(sig: Uint8Array, publicKey: Uint8Array): boolean {
  const r = sig.subarray(0, 32);
  return (
    isCanonicalScalar(sig.subarray(32, 64)) &&
    !hasSmallOrderEdwardsEncoding(r) &&
    isCanonicalEdwardsEncoding(publicKey) &&
    !hasSmallOrderEdwardsEncoding(publicKey)
  );
}

/**
 * Strict Ed25519 verification in pure JavaScript, equal to libsodium's
 * `crypto_sign_verify_detached`: the prechecks, then the cofactorless equation R = [S]B − [k]A
 * with the recomputed R compared to the signature's R byte for byte.
 */
export function verifyEd25519Js(sig: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (!passesStrictPrechecks(sig, publicKey)) return false;
  let a;
  try {
    a = ed25519.Point.fromBytes(publicKey, false);
  } catch {
    return false;
  }
  const r = sig.subarray(0, 32);
  const k = le(sha512(concatBytes(r, publicKey, message))) % ED25519_L;
  const s = le(sig.subarray(32, 64));
  const sB = s === 0n ? ed25519.Point.ZERO : ed25519.Point.BASE.multiply(s);
  const kA = k === 0n ? ed25519.Point.ZERO : a.multiplyUnsafe(k);
  return equalBytes(sB.subtract(kA).toBytes(), r);
}
