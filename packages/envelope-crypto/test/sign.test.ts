import { beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from './engines.js';
import { SIGNATURE_BYTES, signDetached, verifyDetached } from '../src/index.js';
import { ED25519_L } from '../src/internal/curve25519.js';
import { offsetView } from '@org/test-utils';
import { fill, loadSodium } from './sodium.js';
import { ED25519_NON_CANONICAL, ED25519_OFF_CURVE, ED25519_SMALL_ORDER, le32 } from './points.js';

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

function leToBigInt(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

describe('signDetached', () => {
  it('is deterministic and byte-identical to crypto_sign_detached on every engine', () => {
    const kp = sodium.crypto_sign_seed_keypair(fill(32, 3));
    const m = fill(100, 4);
    const ref = sodium.crypto_sign_detached(m, kp.privateKey);
    for (const engine of ENGINES) {
      expect(signDetached(m, kp.privateKey, engine)).toEqual(ref);
      expect(signDetached(m, kp.privateKey, engine)).toHaveLength(SIGNATURE_BYTES);
    }
  });

  it('gives the same signature for keys and messages passed as views and pooled Buffers (S118)', () => {
    const kp = sodium.crypto_sign_seed_keypair(fill(32, 5));
    const m = fill(33, 6);
    const ref = sodium.crypto_sign_detached(m, kp.privateKey);
    for (const engine of ENGINES) {
      expect(signDetached(offsetView(m), offsetView(kp.privateKey, 3), engine)).toEqual(ref);
      expect(signDetached(Buffer.from(m), Buffer.from(kp.privateKey), engine)).toEqual(ref);
    }
  });

  it('throws RangeError for a 32-byte secret key and TypeError for a string (caller bugs)', () => {
    expect(() => signDetached(fill(1, 1), fill(32, 1))).toThrow(RangeError);
    expect(() => signDetached('hi' as unknown as Uint8Array, fill(64, 1))).toThrow(TypeError);
  });
});

describe('verifyDetached', () => {
  const kp = () => sodium.crypto_sign_seed_keypair(fill(32, 8));

  it('accepts a libsodium signature on every engine, also as views and pooled Buffers (S118)', () => {
    const { publicKey, privateKey } = kp();
    const m = fill(65, 9);
    const sig = sodium.crypto_sign_detached(m, privateKey);
    for (const engine of ENGINES) {
      expect(verifyDetached(sig, m, publicKey, engine)).toBe(true);
      expect(verifyDetached(offsetView(sig), offsetView(m, 1), offsetView(publicKey, 9), engine)).toBe(true);
      expect(verifyDetached(Buffer.from(sig), Buffer.from(m), Buffer.from(publicKey), engine)).toBe(true);
    }
  });

  it('rejects every single-bit flip of the signature on every engine, as libsodium does', () => {
    const { publicKey, privateKey } = kp();
    const m = fill(10, 10);
    const sig = sodium.crypto_sign_detached(m, privateKey);
    for (let i = 0; i < 64; i++) {
      const bad = sig.slice();
      bad[i]! ^= 1 << (i % 8);
      expect(sodium.crypto_sign_verify_detached(bad, m, publicKey)).toBe(false);
      expect(verifyDetached(bad, m, publicKey, 'native')).toBe(false);
      expect(verifyDetached(bad, m, publicKey, 'sodium')).toBe(false);
      if (i % 8 === 0) expect(verifyDetached(bad, m, publicKey, 'js')).toBe(false);
    }
  });

  it('rejects S ≥ L (S + L, the malleated signature) on every engine, as libsodium does', () => {
    const { publicKey, privateKey } = kp();
    const m = fill(20, 11);
    const sig = sodium.crypto_sign_detached(m, privateKey);
    const s = leToBigInt(sig.subarray(32));
    for (const sPrime of [s + ED25519_L, ED25519_L, 2n ** 256n - 1n]) {
      if (sPrime >= 2n ** 256n) continue;
      const bad = sig.slice();
      bad.set(le32(sPrime), 32);
      expect(sodium.crypto_sign_verify_detached(bad, m, publicKey)).toBe(false);
      for (const engine of ENGINES) expect(verifyDetached(bad, m, publicKey, engine)).toBe(false);
    }
  });

  it('returns false (never throws) for small-order, non-canonical and off-curve public keys', () => {
    const m = fill(5, 12);
    const sig = sodium.crypto_sign_detached(m, kp().privateKey);
    const keys = [...ED25519_SMALL_ORDER, ...ED25519_NON_CANONICAL].map((e) => e.bytes);
    keys.push(ED25519_OFF_CURVE);
    for (const pk of keys) {
      for (const engine of ENGINES) expect(verifyDetached(sig, m, pk, engine)).toBe(false);
    }
  });

  it('rejects a signature whose R is a small-order point, even with S = 0 and A = R', () => {
    // A trivial forgery against non-strict verifiers: A = R = identity, S = 0.
    const identity = le32(1n);
    const sig = new Uint8Array(64);
    sig.set(identity, 0);
    for (const engine of ENGINES) expect(verifyDetached(sig, fill(3, 1), identity, engine)).toBe(false);
    expect(sodium.crypto_sign_verify_detached(sig, fill(3, 1), identity)).toBe(false);
  });

  it('throws RangeError for a signature or key of the wrong length (caller bugs)', () => {
    const { publicKey } = kp();
    expect(() => verifyDetached(new Uint8Array(63), fill(1, 1), publicKey)).toThrow(RangeError);
    expect(() => verifyDetached(new Uint8Array(64), fill(1, 1), publicKey.subarray(1))).toThrow(RangeError);
    expect(() => verifyDetached(new Uint8Array(64), [] as unknown as Uint8Array, publicKey)).toThrow(
      TypeError,
    );
  });
});

describe('native key cache', () => {
  it('never reuses a key object after the bytes of the same array changed', async () => {
    const { signDetached, verifyDetached, generateKeyPair } = await import('../src/index.js');
    const a = generateKeyPair('sign');
    const b = generateKeyPair('sign');
    const shared = a.secretKey.bytes.slice();
    const msg = new TextEncoder().encode('m');
    expect(verifyDetached(signDetached(msg, shared), msg, a.publicKey!.bytes)).toBe(true);
    shared.set(b.secretKey.bytes); // same array, other key
    const sig = signDetached(msg, shared);
    expect(verifyDetached(sig, msg, b.publicKey!.bytes)).toBe(true);
    expect(verifyDetached(sig, msg, a.publicKey!.bytes)).toBe(false);
    shared.fill(0); // wiped: an all-zero seed is a different key again, never the cached one
    expect(verifyDetached(signDetached(msg, shared), msg, b.publicKey!.bytes)).toBe(false);
  });
});
