import { decodeHex } from '../encoding.js';
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

// Raw 32-byte keys become node:crypto KeyObjects through fixed DER prefixes (RFC 8410):
// PKCS#8 for secret keys and SubjectPublicKeyInfo for public keys, Ed25519 (1.3.101.112) and
// X25519 (1.3.101.110). The native implementations (OpenSSL) produce the same bytes as
// libsodium for these deterministic operations; tests check both paths against libsodium.
const PKCS8 = { ed25519: '302e020100300506032b657004220420', x25519: '302e020100300506032b656e04220420' };
const SPKI = { ed25519: '302a300506032b6570032100', x25519: '302a300506032b656e032100' };

type Curve = keyof typeof PKCS8;

function der(prefixHex: string, raw: Uint8Array): Buffer {
  return Buffer.concat([decodeHex(prefixHex), raw]);
}

/** A native secret KeyObject from a 32-byte seed / scalar. */
export function nativeSecretKey(curve: Curve, raw32: Uint8Array): KeyObject {
  return createPrivateKey({ key: der(PKCS8[curve], raw32), format: 'der', type: 'pkcs8' });
}

/** A native public KeyObject from 32 raw bytes. */
export function nativePublicKey(curve: Curve, raw32: Uint8Array): KeyObject {
  return createPublicKey({ key: der(SPKI[curve], raw32), format: 'der', type: 'spki' });
}

/** The raw 32 public bytes of a native KeyObject. */
export function rawPublicBytes(key: KeyObject): Uint8Array {
  const spki = key.export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(spki.length - 32));
}
