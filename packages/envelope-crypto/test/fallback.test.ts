// Without sodium-native (the module did not load) everything runs on node:crypto / noble and
// stays byte-identical to libsodium. The loader is replaced as if it had thrown.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CryptoError,
  boxEasy,
  boxOpenEasy,
  defaultEngine,
  randomBytes,
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
import type * as SodiumModule from '../src/internal/sodium.js';
import { fill, loadSodium } from './sodium.js';

vi.mock('../src/internal/sodium.js', async (importOriginal) => {
  const real = await importOriginal<typeof SodiumModule>();
  const sodium = real.loadSodium(() => {
    throw new Error("Cannot find module 'sodium-native'");
  });
  return {
    ...real,
    sodium,
    requireSodium: () => {
      throw new Error("engine 'sodium': sodium-native could not be loaded");
    },
  };
});

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

describe('fallback when sodium-native does not load', () => {
  it("defaults to 'native' and refuses an explicit 'sodium'", () => {
    expect(defaultEngine()).toBe('native');
    const kp = sodium.crypto_sign_seed_keypair(fill(32, 81));
    expect(() => signDetached(fill(3, 1), kp.privateKey, 'sodium')).toThrow(/sodium-native/);
  });

  // 2.0 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'is byte-identical to libsodium for keys, signatures, boxes, secretboxes and sealed boxes',
    { timeout: 10_000 },
    () => {
      const signKp = sodium.crypto_sign_seed_keypair(fill(32, 82));
      const a = sodium.crypto_box_seed_keypair(fill(32, 83));
      const b = sodium.crypto_box_seed_keypair(fill(32, 84));
      for (const n of [0, 1, 64, 1000, 70_000]) {
        const m = fill(n, n + 1);
        const nonce = fill(24, n + 2);
        const key = fill(32, n + 3);
        const sig = signDetached(m, signKp.privateKey);
        expect(sig).toEqual(sodium.crypto_sign_detached(m, signKp.privateKey));
        expect(verifyDetached(sig, m, signKp.publicKey)).toBe(true);
        expect(secretboxEasy(m, nonce, key)).toEqual(sodium.crypto_secretbox_easy(m, nonce, key));
        expect(secretboxOpenEasy(sodium.crypto_secretbox_easy(m, nonce, key), nonce, key)).toEqual(m);
        const box = boxEasy(m, nonce, b.publicKey, a.privateKey);
        expect(box).toEqual(sodium.crypto_box_easy(m, nonce, b.publicKey, a.privateKey));
        expect(boxOpenEasy(box, nonce, a.publicKey, b.privateKey)).toEqual(m);
        expect(sodium.crypto_box_seal_open(sealedBoxSeal(m, b.publicKey), b.publicKey, b.privateKey)).toEqual(
          m,
        );
        expect(sealedBoxOpen(sodium.crypto_box_seal(m, b.publicKey), b.publicKey, b.privateKey)).toEqual(m);
      }
      expect(ed25519PublicFromSeed(fill(32, 82))).toEqual(signKp.publicKey);
      expect(x25519PublicFromSecret(a.privateKey)).toEqual(a.publicKey);
      expect(x25519SharedSecret(a.privateKey, b.publicKey)).toEqual(
        sodium.crypto_scalarmult(a.privateKey, b.publicKey),
      );
      const bad = secretboxEasy(fill(5, 9), fill(24, 9), fill(32, 9));
      bad[0]! ^= 1;
      expect(() => secretboxOpenEasy(bad, fill(24, 9), fill(32, 9))).toThrowCode(
        CryptoError,
        'CRYPTO_AUTH_FAILED',
      );
    },
  );

  it('draws random bytes from node:crypto', () => {
    expect(randomBytes(0)).toHaveLength(0);
    expect(randomBytes(65_537)).toHaveLength(65_537);
    expect(randomBytes(24)).not.toEqual(randomBytes(24));
  });
});
