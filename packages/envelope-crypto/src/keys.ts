import { createPublicKey } from 'node:crypto';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { assertBytes, concatBytes, equalBytes, randomBytes } from './bytes.js';
import { decodeHex, encodeHex } from './encoding.js';
import { CryptoError } from './errors.js';
import {
  hasSmallOrderEdwardsEncoding,
  hasSmallOrderMontgomeryEncoding,
  isCanonicalEdwardsEncoding,
  isCanonicalMontgomeryEncoding,
} from './internal/curve25519.js';
import { nativeSecretKey, rawPublicBytes } from './internal/native.js';
import { defaultEngine, sodiumFor, type Engine } from './internal/engine.js';

/** Key purposes, each tied to one libsodium primitive family. */
export const KEY_PURPOSES = ['sign', 'authenticated', 'anonymous', 'symmetric'] as const;
/** A key purpose: `sign` (Ed25519), `authenticated` (crypto_box), `anonymous` (crypto_box_seal), `symmetric` (crypto_secretbox). */
export type KeyPurpose = (typeof KEY_PURPOSES)[number];
/** Key types. */
export const KEY_TYPES = ['public', 'secret'] as const;
/** `public` or `secret`. */
export type KeyType = (typeof KEY_TYPES)[number];

/** Size in bytes of a 64-byte libsodium sign secret key (seed ‖ public key). */
export const SIGN_SECRET_KEY_BYTES = 64;
/** Size in bytes of every other key. */
export const KEY_BYTES = 32;

/** A parsed, validated key. `id` is a non-secret label used in messages. */
export interface Key {
  readonly purpose: KeyPurpose;
  readonly type: KeyType;
  readonly bytes: Uint8Array;
  readonly id?: string | undefined;
}

/** A key as it appears in requests and bootstraps. */
export interface KeySpec {
  id?: string | undefined;
  purpose: string;
  type: string;
  keyHex: string;
}

/** A freshly generated key pair; `publicKey` is `null` for `symmetric`. */
export interface KeyPair {
  readonly purpose: KeyPurpose;
  readonly publicKey: Key | null;
  readonly secretKey: Key;
}

function label(id: string | undefined): string {
  return id === undefined ? 'key' : `key "${id}"`;
}

function isPurpose(v: unknown): v is KeyPurpose {
  return typeof v === 'string' && (KEY_PURPOSES as readonly string[]).includes(v);
}

function isType(v: unknown): v is KeyType {
  return typeof v === 'string' && (KEY_TYPES as readonly string[]).includes(v);
}

/**
 * The byte length of a key of this purpose and type.
 * @throws {@link CryptoError} `CRYPTO_BAD_KEY_SPEC` for a symmetric public key.
 */
export function keyByteLength(purpose: KeyPurpose, type: KeyType): number {
  if (purpose === 'symmetric' && type === 'public') {
    throw new CryptoError('CRYPTO_BAD_KEY_SPEC', 'a symmetric key has no public half');
  }
  return purpose === 'sign' && type === 'secret' ? SIGN_SECRET_KEY_BYTES : KEY_BYTES;
}

/** The Ed25519 public key of a 32-byte seed (identical to libsodium's `crypto_sign_seed_keypair` on every engine). */
export function ed25519PublicFromSeed(seed: Uint8Array, engine: Engine = defaultEngine()): Uint8Array {
  assertBytes(seed, 32, 'seed');
  if (engine === 'js') return ed25519.getPublicKey(seed);
  const sodium = sodiumFor(engine);
  if (sodium !== undefined) {
    const pk = new Uint8Array(32);
    const sk = new Uint8Array(64);
    sodium.crypto_sign_seed_keypair(pk, sk, seed);
    sodium.sodium_memzero(sk);
    return pk;
  }
  return rawPublicBytes(createPublicKey(nativeSecretKey('ed25519', seed)));
}

/** The X25519 public key of a 32-byte secret scalar (identical to libsodium's `crypto_scalarmult_base` on every engine). */
export function x25519PublicFromSecret(secret: Uint8Array, engine: Engine = defaultEngine()): Uint8Array {
  assertBytes(secret, 32, 'secret');
  if (engine === 'js') return x25519.getPublicKey(secret);
  const sodium = sodiumFor(engine);
  if (sodium !== undefined) {
    const pk = new Uint8Array(32);
    sodium.crypto_scalarmult_base(pk, secret);
    return pk;
  }
  return rawPublicBytes(createPublicKey(nativeSecretKey('x25519', secret)));
}

/**
 * Checks that public key bytes are a canonical, non-small-order point for their purpose: the one key check of the
 * oapp format (oapp-format SPEC.md §2), applied wherever a key appears, with one code per defect.
 * X25519 (`authenticated`, `anonymous`): weak first (small-order u, bit 255 ignored → `CRYPTO_WEAK_KEY`), then
 * canonical (all 256 bits read little-endian below p; bit 255 set or u ≥ p → `CRYPTO_INVALID_PUBLIC_KEY`: X25519
 * would treat such a key as another key's alias). Ed25519 (`sign`): canonical first (y ≥ p →
 * `CRYPTO_INVALID_PUBLIC_KEY`), then small order (`CRYPTO_WEAK_KEY`), then on the curve (`CRYPTO_INVALID_PUBLIC_KEY`).
 * @throws {@link CryptoError} `CRYPTO_INVALID_PUBLIC_KEY`, `CRYPTO_WEAK_KEY`.
 */
export function assertStrongPublicKey(purpose: KeyPurpose, bytes: Uint8Array, id?: string): void {
  if (purpose === 'sign') {
    if (!isCanonicalEdwardsEncoding(bytes)) {
      throw new CryptoError(
        'CRYPTO_INVALID_PUBLIC_KEY',
        `${label(id)} is not a canonical Ed25519 public key`,
        { details: { keyId: id } },
      );
    }
    if (hasSmallOrderEdwardsEncoding(bytes)) {
      throw new CryptoError('CRYPTO_WEAK_KEY', `${label(id)} is a small-order Ed25519 public key`, {
        details: { keyId: id },
      });
    }
    try {
      ed25519.Point.fromBytes(bytes, false); // y < p was checked above; this checks the point is on the curve
    } catch (cause) {
      throw new CryptoError('CRYPTO_INVALID_PUBLIC_KEY', `${label(id)} is not a point on the Ed25519 curve`, {
        details: { keyId: id },
        cause,
      });
    }
    return;
  }
  if (hasSmallOrderMontgomeryEncoding(bytes)) {
    throw new CryptoError('CRYPTO_WEAK_KEY', `${label(id)} is an all-zero or small-order X25519 public key`, {
      details: { keyId: id },
    });
  }
  if (!isCanonicalMontgomeryEncoding(bytes)) {
    throw new CryptoError('CRYPTO_INVALID_PUBLIC_KEY', `${label(id)} is not a canonical X25519 public key`, {
      details: { keyId: id },
    });
  }
}

function checkSignSecret(bytes: Uint8Array, id: string | undefined): void {
  const derived = ed25519PublicFromSeed(bytes.subarray(0, 32));
  if (!equalBytes(derived, bytes.subarray(32, 64))) {
    throw new CryptoError(
      'CRYPTO_KEY_MISMATCH',
      `${label(id)}: the public half of the sign secret key does not match its seed`,
      {
        details: { keyId: id },
      },
    );
  }
}

/**
 * Parses a key from its request/bootstrap form, strictly: purpose and type must be known, `keyHex`
 * must be hex (either case) of the exact length, a sign secret key's public half must match its
 * seed, and public keys must be canonical and not small-order.
 * @throws {@link CryptoError} `CRYPTO_BAD_KEY_SPEC`, `CRYPTO_BAD_HEX`, `CRYPTO_BAD_KEY_LENGTH`,
 *   `CRYPTO_KEY_MISMATCH`, `CRYPTO_INVALID_PUBLIC_KEY`, `CRYPTO_WEAK_KEY`.
 */
export function parseKey(spec: KeySpec): Key {
  const { id, purpose, type, keyHex } = spec;
  if (!isPurpose(purpose))
    throw new CryptoError('CRYPTO_BAD_KEY_SPEC', `${label(id)}: unknown purpose`, { details: { keyId: id } });
  if (!isType(type))
    throw new CryptoError('CRYPTO_BAD_KEY_SPEC', `${label(id)}: unknown type`, { details: { keyId: id } });
  const length = keyByteLength(purpose, type);
  const bytes = decodeKeyHex(keyHex, length, id);
  if (purpose === 'sign' && type === 'secret') checkSignSecret(bytes, id);
  if (type === 'public') assertStrongPublicKey(purpose, bytes, id);
  return { purpose, type, bytes, id };
}

function decodeKeyHex(keyHex: string, length: number, id: string | undefined): Uint8Array {
  try {
    return decodeHex(keyHex, length, label(id));
  } catch (err) {
    if (err instanceof CryptoError) {
      throw new CryptoError(err.code, err.message, { details: { ...err.details, keyId: id }, cause: err });
    }
    throw err;
  }
}

/**
 * Checks that a key has the purpose and type a field requires.
 * @param field - the referencing field, for the message (e.g. `encryptionKeys`).
 * @throws {@link CryptoError} `CRYPTO_WRONG_KEY_PURPOSE`, `CRYPTO_WRONG_KEY_TYPE`.
 */
export function expectKey(key: Key, purpose: KeyPurpose, type: KeyType, field: string): void {
  const details = { keyId: key.id, field, expectedPurpose: purpose, expectedType: type };
  if (key.purpose !== purpose) {
    throw new CryptoError(
      'CRYPTO_WRONG_KEY_PURPOSE',
      `${field}: ${label(key.id)} has purpose ${key.purpose}, expected ${purpose}`,
      { details },
    );
  }
  if (key.type !== type) {
    throw new CryptoError(
      'CRYPTO_WRONG_KEY_TYPE',
      `${field}: ${label(key.id)} is a ${key.type} key, expected a ${type} key`,
      { details },
    );
  }
}

/**
 * Derives the public key of a secret key (`sign`: the stored public half; `authenticated` and
 * `anonymous`: X25519 base-point multiplication).
 * @throws {@link CryptoError} `CRYPTO_WRONG_KEY_TYPE` (not a secret key), `CRYPTO_BAD_KEY_SPEC` (symmetric).
 */
export function derivePublicKey(secretKey: Key): Key {
  if (secretKey.type !== 'secret')
    throw new CryptoError('CRYPTO_WRONG_KEY_TYPE', `${label(secretKey.id)} is not a secret key`);
  const { purpose, id } = secretKey;
  if (purpose === 'symmetric')
    throw new CryptoError('CRYPTO_BAD_KEY_SPEC', 'a symmetric key has no public half');
  const bytes = purpose === 'sign' ? secretKey.bytes.slice(32, 64) : x25519PublicFromSecret(secretKey.bytes);
  return { purpose, type: 'public', bytes, id };
}

/** Generates a key pair for a purpose from the CSPRNG, in libsodium's formats. */
export function generateKeyPair(purpose: KeyPurpose): KeyPair {
  if (!isPurpose(purpose)) throw new TypeError(`generateKeyPair: unknown purpose`);
  const seed = randomBytes(32);
  if (purpose === 'symmetric')
    return { purpose, publicKey: null, secretKey: { purpose, type: 'secret', bytes: seed } };
  if (purpose === 'sign') {
    const pub = ed25519PublicFromSeed(seed);
    return {
      purpose,
      publicKey: { purpose, type: 'public', bytes: pub },
      secretKey: { purpose, type: 'secret', bytes: concatBytes(seed, pub) },
    };
  }
  const secretKey: Key = { purpose, type: 'secret', bytes: seed };
  return { purpose, publicKey: derivePublicKey(secretKey), secretKey };
}

/** Builds a key from raw bytes, with the same checks as {@link parseKey}. */
export function keyFromBytes(purpose: KeyPurpose, type: KeyType, bytes: Uint8Array, id?: string): Key {
  assertBytes(bytes, undefined, 'bytes');
  return parseKey({ id, purpose, type, keyHex: encodeHex(bytes) });
}

/** The key as lowercase hex (the one case this project writes). */
export function keyToHex(key: Key): string {
  return encodeHex(key.bytes);
}
