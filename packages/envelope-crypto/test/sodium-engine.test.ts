// The sodium-native fast path: it must load here (it is a dependency), it is the default, a loader
// that fails falls back to node:crypto, and it accepts views with a non-zero byteOffset (S118).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CryptoError,
  boxEasy,
  boxOpenEasy,
  defaultEngine,
  ed25519PublicFromSeed,
  sealedBoxOpen,
  sealedBoxSeal,
  secretboxEasy,
  secretboxOpenEasy,
  signDetached,
  verifyDetached,
  x25519PublicFromSecret,
  x25519SharedSecret,
} from '../src/index.js';
import { engineFor } from '../src/internal/engine.js';
import { loadSodium as loadSodiumWith, sodium as sodiumNative } from '../src/internal/sodium.js';
import { offsetView } from '@org/test-utils';
import { fill, loadSodium } from './sodium.js';
import { X25519_SMALL_ORDER } from './points.js';

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

describe('sodium-native', () => {
  it('loads sodium-native on this machine', () => {
    expect(sodiumNative).toBeDefined();
    expect(defaultEngine()).toBe('sodium');
  });

  it('falls back to node:crypto when the loader throws or returns something else', () => {
    const missing = loadSodiumWith(() => {
      throw new Error("Cannot find module 'sodium-native'");
    });
    expect(missing).toBeUndefined();
    expect(engineFor(missing)).toBe('native');
    expect(loadSodiumWith(() => ({}))).toBeUndefined();
    expect(loadSodiumWith(() => null)).toBeUndefined();
    expect(loadSodiumWith(() => ({ ...sodiumNative, crypto_box_seal: undefined }))).toBeUndefined();
    expect(engineFor(loadSodiumWith(() => sodiumNative))).toBe('sodium');
  });

  it('accepts views with a non-zero byteOffset and pooled Buffers everywhere (S118)', () => {
    const signKp = sodium.crypto_sign_seed_keypair(fill(32, 51));
    const a = sodium.crypto_box_seed_keypair(fill(32, 52));
    const b = sodium.crypto_box_seed_keypair(fill(32, 53));
    const m = fill(100, 54);
    const nonce = fill(24, 55);
    const key = fill(32, 56);

    const sig = sodium.crypto_sign_detached(m, signKp.privateKey);
    expect(signDetached(offsetView(m, 3), offsetView(signKp.privateKey, 5), 'sodium')).toEqual(sig);
    expect(signDetached(Buffer.from(m), Buffer.from(signKp.privateKey), 'sodium')).toEqual(sig);
    expect(
      verifyDetached(offsetView(sig, 1), offsetView(m, 2), offsetView(signKp.publicKey, 7), 'sodium'),
    ).toBe(true);
    expect(verifyDetached(Buffer.from(sig), Buffer.from(m), Buffer.from(signKp.publicKey), 'sodium')).toBe(
      true,
    );

    expect(ed25519PublicFromSeed(offsetView(fill(32, 51), 9))).toEqual(signKp.publicKey);
    expect(x25519PublicFromSecret(offsetView(a.privateKey, 4))).toEqual(a.publicKey);
    expect(x25519SharedSecret(offsetView(a.privateKey, 2), offsetView(b.publicKey, 6), 'sodium')).toEqual(
      sodium.crypto_scalarmult(a.privateKey, b.publicKey),
    );

    const sb = sodium.crypto_secretbox_easy(m, nonce, key);
    expect(secretboxEasy(offsetView(m, 1), offsetView(nonce, 2), offsetView(key, 3))).toEqual(sb);
    expect(secretboxOpenEasy(offsetView(sb, 5), offsetView(nonce), offsetView(key, 8))).toEqual(m);
    expect(secretboxOpenEasy(Buffer.from(sb), Buffer.from(nonce), Buffer.from(key))).toEqual(m);

    const box = sodium.crypto_box_easy(m, nonce, b.publicKey, a.privateKey);
    expect(
      boxEasy(offsetView(m, 4), offsetView(nonce, 1), offsetView(b.publicKey, 2), offsetView(a.privateKey)),
    ).toEqual(box);
    expect(
      boxOpenEasy(
        offsetView(box, 3),
        offsetView(nonce),
        offsetView(a.publicKey, 5),
        offsetView(b.privateKey, 1),
      ),
    ).toEqual(m);

    const sealed = sealedBoxSeal(offsetView(m, 6), offsetView(b.publicKey, 3));
    expect(sodium.crypto_box_seal_open(sealed, b.publicKey, b.privateKey)).toEqual(m);
    const theirs = sodium.crypto_box_seal(m, b.publicKey);
    expect(
      sealedBoxOpen(offsetView(theirs, 7), offsetView(b.publicKey, 1), offsetView(b.privateKey, 2)),
    ).toEqual(m);
    expect(sealedBoxOpen(Buffer.from(theirs), Buffer.from(b.publicKey), Buffer.from(b.privateKey))).toEqual(
      m,
    );
  });

  it('keeps the error codes: CRYPTO_AUTH_FAILED for forged boxes, CRYPTO_WEAK_KEY for small-order keys', () => {
    const b = sodium.crypto_box_seed_keypair(fill(32, 61));
    const key = fill(32, 62);
    const nonce = fill(24, 63);
    const sb = secretboxEasy(fill(40, 64), nonce, key);
    sb[20]! ^= 1;
    expect(() => secretboxOpenEasy(sb, nonce, key)).toThrowCode(CryptoError, 'CRYPTO_AUTH_FAILED');
    expect(() => secretboxOpenEasy(new Uint8Array(15), nonce, key)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    const sealed = sealedBoxSeal(fill(10, 65), b.publicKey);
    sealed[50]! ^= 1;
    expect(() => sealedBoxOpen(sealed, b.publicKey, b.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    expect(() => sealedBoxOpen(new Uint8Array(47), b.publicKey, b.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    for (const { bytes: u } of X25519_SMALL_ORDER) {
      expect(() => sealedBoxSeal(fill(10, 66), u)).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
      expect(() => x25519SharedSecret(b.privateKey, u, 'sodium')).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
      // A sealed box whose ephemeral key is small-order cannot be opened: one failure class.
      const forged = new Uint8Array(60);
      forged.set(u, 0);
      expect(() => sealedBoxOpen(forged, b.publicKey, b.privateKey)).toThrowCode(
        CryptoError,
        'CRYPTO_AUTH_FAILED',
      );
    }
  });

  it('signs with the key derived from the seed, whatever the public half of the 64-byte key says', () => {
    const kp = sodium.crypto_sign_seed_keypair(fill(32, 71));
    const m = fill(33, 72);
    const wrongHalf = kp.privateKey.slice();
    wrongHalf[40]! ^= 1;
    expect(signDetached(m, wrongHalf, 'sodium')).toEqual(signDetached(m, wrongHalf, 'native'));
    expect(signDetached(m, wrongHalf, 'sodium')).toEqual(sodium.crypto_sign_detached(m, kp.privateKey));
  });
});
