import { createHash, createPrivateKey, createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';

// Raw 32-byte keys become node:crypto KeyObjects through JWK (RFC 8037, OKP keys). JWK import is
// 5-10x faster than PKCS#8/SPKI DER import in Node 20's OpenSSL 3.0, where DER decoding goes
// through the slow provider decoder chain (~0.8 ms per secret key against ~0.15 ms).
//
// Node requires the public member `x` on a private JWK, but OpenSSL derives the public key from
// `d` and ignores `x`. We pass 32 zero bytes, not a real public key: if a future OpenSSL ever used
// `x`, every derived public key would be zero and the libsodium cross-tests would fail loudly,
// instead of a claimed public key being silently trusted (test/keys.test.ts, S95).
//
// Secret material passes through a base64url string here, which JavaScript cannot wipe; the same
// holds for the KeyObject's own copy inside OpenSSL. The JS engine (`engine: 'js'`) avoids both.
const CRV = { ed25519: 'Ed25519', x25519: 'X25519' } as const;
const ZERO_X = Buffer.alloc(32).toString('base64url');

type Curve = keyof typeof CRV;

function b64url(raw: Uint8Array): string {
  return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64url');
}

// Imports are cached by the identity of the caller's bytes: the backing ArrayBuffer (held weakly)
// and the offset, so one key used for several operations (a packager identity boxing for five
// recipients, a signer's key checked and then used) is imported once. Nothing is cached by
// content, so a secret never outlives the caller's array in this cache, and no copy of it is kept:
// an entry holds the KeyObject and SHA-256 of the 32 bytes, compared before every reuse, so a
// wiped or overwritten array is imported afresh.
interface Entry {
  readonly digest: Buffer;
  readonly key: KeyObject;
}
const cache = new WeakMap<ArrayBufferLike, Map<string, Entry>>();

function cached(slot: string, raw32: Uint8Array, make: () => KeyObject): KeyObject {
  const digest = createHash('sha256').update(raw32).digest();
  let slots = cache.get(raw32.buffer);
  const hit = slots?.get(`${slot}@${raw32.byteOffset}`);
  if (hit !== undefined && timingSafeEqual(hit.digest, digest)) return hit.key;
  const key = make();
  if (slots === undefined) {
    slots = new Map();
    cache.set(raw32.buffer, slots);
  }
  slots.set(`${slot}@${raw32.byteOffset}`, { digest, key });
  return key;
}

/** A native secret KeyObject from a 32-byte seed / scalar. */
export function nativeSecretKey(curve: Curve, raw32: Uint8Array): KeyObject {
  return cached(`${curve}:secret`, raw32, () =>
    createPrivateKey({ key: { kty: 'OKP', crv: CRV[curve], d: b64url(raw32), x: ZERO_X }, format: 'jwk' }),
  );
}

/** A native public KeyObject from 32 raw bytes. */
export function nativePublicKey(curve: Curve, raw32: Uint8Array): KeyObject {
  return cached(`${curve}:public`, raw32, () =>
    createPublicKey({ key: { kty: 'OKP', crv: CRV[curve], x: b64url(raw32) }, format: 'jwk' }),
  );
}

/** The raw 32 public bytes of a native KeyObject (JWK export: ~25x faster than DER here). */
export function rawPublicBytes(key: KeyObject): Uint8Array {
  const { x } = key.export({ format: 'jwk' });
  if (typeof x !== 'string') throw new TypeError('rawPublicBytes: expected an OKP public key');
  // Trusted input: OpenSSL's own export of a key it holds, not data from outside (S117 is about untrusted input).
  // eslint-disable-next-line no-restricted-syntax
  return new Uint8Array(Buffer.from(x, 'base64url'));
}
