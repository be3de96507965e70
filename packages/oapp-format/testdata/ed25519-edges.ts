// Ed25519 edge-case signature records for the negative corpus (SPEC.md §5.1, docs S177). Each record is one that
// libsodium's crypto_sign_verify_detached refuses; most of them satisfy the bare verification equation
// [S mod L]B − [k]A = R, so a verifier that skips one of the §5.1 checks would accept them. Only bigint arithmetic
// and SHA-512: the signer's secret scalar is known (test keys), so no point arithmetic is needed. Test data only.
import { sha512 } from '@noble/hashes/sha2.js';
import type { Key } from '@org/envelope-crypto';
import type { PackageKind } from '../src/constants.js';
import type { SignatureRecord } from '../src/signatures.js';
import { signingMessage } from '../src/statement.js';
import type { FormatVersion } from '../src/constants.js';

export const P = 2n ** 255n - 19n;
/** The order of the Ed25519 prime subgroup. */
export const L = 2n ** 252n + 27742317777372353535851937790883648493n;

export function le(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] ?? 0);
  return n;
}

export function le32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** The encoding of the neutral element (x = 0, y = 1): a point of order 1, on libsodium's small-order list. */
export const IDENTITY = le32(1n);

function modPow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = ((base % P) + P) % P;
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}

/** True when y is the y-coordinate of a point of edwards25519 (x² = (y² − 1) / (d·y² + 1) is a square mod p). */
function isCurveY(y: bigint): boolean {
  const d = (((-121665n * modPow(121666n, P - 2n)) % P) + P) % P;
  const u = (y * y - 1n + P) % P;
  const v = (d * y * y + 1n) % P;
  const x2 = (u * modPow(v, P - 2n)) % P;
  return x2 === 0n || modPow(x2, (P - 1n) / 2n) === 1n;
}

/**
 * The non-canonical encoding p + y of the smallest y ≥ 2 on the curve: a point that is not of small order, encoded
 * with y ≥ p (libsodium's `ge25519_is_canonical` refuses it). The two other encodings with y ≥ p, p and p + 1, are
 * small-order points.
 */
export function nonCanonicalPointEncoding(): Uint8Array {
  for (let y = 2n; y < 19n; y++) if (isCurveY(y)) return le32(P + y);
  throw new Error('generator: no curve point with 2 ≤ y < 19');
}

/** The signer's secret scalar a (A = [a]B): the clamped first half of SHA-512(seed), RFC 8032 §5.1.5. */
function secretScalar(signSecretKey: Key): bigint {
  const h = sha512(signSecretKey.bytes.subarray(0, 32)).slice(0, 32);
  h[0]! &= 248;
  h[31]! &= 127;
  h[31]! |= 64;
  return le(h);
}

function k(r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint {
  const h = sha512(new Uint8Array([...r, ...a, ...m]));
  return le(h) % L;
}

/** The edge records, each built for one STATEMENT and one signer (or none, for the small-order and y ≥ p keys). */
export const edgeRecords = {
  /** R is the identity (small order) and S = k·a mod L, so [S]B − [k]A is the identity: the equation holds. */
  smallOrderR(kind: PackageKind, statementBytes: Uint8Array, signer: Key, signText: string, version: FormatVersion = 1): SignatureRecord {
    const publicKey = signer.bytes.slice(32, 64);
    const m = signingMessage(kind, statementBytes, new TextEncoder().encode(signText), version);
    const s = (k(IDENTITY, publicKey, m) * secretScalar(signer)) % L;
    return { publicKey, signText, signature: new Uint8Array([...IDENTITY, ...le32(s)]) };
  },
  /** A valid record with S replaced by S + m·L: the same point [S]B, but S is not reduced (m = 1: S < 2^253). */
  unreducedS(record: SignatureRecord, multiple: bigint): SignatureRecord {
    const s = le(record.signature.subarray(32, 64)) + multiple * L;
    if (s >= 2n ** 256n) throw new Error('generator: S + m·L does not fit in 32 bytes');
    return { ...record, signature: new Uint8Array([...record.signature.subarray(0, 32), ...le32(s)]) };
  },
  /** A = R = the identity and S = 0: [0]B − [k]·identity = identity = R, for every message. */
  smallOrderA(signText: string): SignatureRecord {
    return { publicKey: IDENTITY.slice(), signText, signature: new Uint8Array([...IDENTITY, ...le32(0n)]) };
  },
  /** A encoded with y ≥ p (not small-order); the signature is a valid one of another key (nobody knows log A). */
  nonCanonicalA(record: SignatureRecord): SignatureRecord {
    return { ...record, publicKey: nonCanonicalPointEncoding() };
  },
};
