import { beforeAll, describe, expect, it } from 'vitest';
import {
  boxBeforeNm,
  boxEasy,
  boxOpenEasy,
  derivePublicKey,
  generateKeyPair,
  sealedBoxOpen,
  sealedBoxSeal,
  secretboxEasy,
  secretboxOpenEasy,
  signDetached,
  verifyDetached,
  aeadEncrypt,
  aeadDecrypt,
  sha256,
  x25519PublicFromSecret,
  ed25519PublicFromSeed,
} from '../src/index.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { ENGINES } from './engines.js';
import { LENGTHS, fill, loadSodium } from './sodium.js';

/** The many-length tests run 100 000-byte messages through the pure-JS engine too. */
const HEAVY_TIMEOUT_MS = 30_000;

/**
 * `expect(actual).toEqual(expected)` for the byte arrays of the many-length tests: vitest's deep equality walks a
 * 100 000-byte array element by element (25 s of this file's 26 s), so equal bytes of the same class are recognised
 * at once here; anything else goes to toEqual, which then fails with its diff. Passes exactly when toEqual would.
 */
function expectBytes(actual: unknown, expected: Uint8Array): void {
  if (
    actual instanceof Uint8Array &&
    Object.getPrototypeOf(actual) === Object.getPrototypeOf(expected) &&
    Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected)
  )
    return;
  expect(actual).toEqual(expected);
}

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

describe('key generation matches libsodium formats', () => {
  it('derives the same public keys as crypto_sign_seed_keypair and crypto_scalarmult_base', () => {
    for (let i = 0; i < 20; i++) {
      const seed = fill(32, i + 1);
      const kp = sodium.crypto_sign_seed_keypair(seed);
      expect(ed25519PublicFromSeed(seed)).toEqual(kp.publicKey);
      expect(x25519PublicFromSecret(seed)).toEqual(sodium.crypto_scalarmult_base(seed));
    }
  });
  it('generates sign secret keys libsodium accepts (seed ‖ public key)', () => {
    const kp = generateKeyPair('sign');
    expect(kp.secretKey.bytes.length).toBe(64);
    expect(sodium.crypto_sign_seed_keypair(kp.secretKey.bytes.subarray(0, 32)).privateKey).toEqual(
      kp.secretKey.bytes,
    );
    const box = generateKeyPair('authenticated');
    expect(sodium.crypto_scalarmult_base(box.secretKey.bytes)).toEqual(derivePublicKey(box.secretKey).bytes);
  });
});

describe('signDetached / verifyDetached against crypto_sign', () => {
  it(
    'produces identical signatures on every engine, verified by libsodium, for many lengths',
    { timeout: HEAVY_TIMEOUT_MS },
    () => {
      const kp = sodium.crypto_sign_seed_keypair(fill(32, 7));
      for (const n of LENGTHS) {
        const m = fill(n, n + 3);
        const ours = signDetached(m, kp.privateKey);
        expect(ours).toEqual(sodium.crypto_sign_detached(m, kp.privateKey));
        for (const engine of ENGINES) expect(signDetached(m, kp.privateKey, engine)).toEqual(ours);
        expect(sodium.crypto_sign_verify_detached(ours, m, kp.publicKey)).toBe(true);
      }
    },
  );
  it('verifies libsodium signatures and rejects a flipped bit in signature, message or key', () => {
    const kp = sodium.crypto_sign_seed_keypair(fill(32, 9));
    for (const n of [0, 1, 64, 1000]) {
      const m = fill(n, n);
      const sig = sodium.crypto_sign_detached(m, kp.privateKey);
      for (const engine of ENGINES) {
        expect(verifyDetached(sig, m, kp.publicKey, engine)).toBe(true);
        const badSig = sig.slice();
        badSig[n % 64]! ^= 1;
        expect(verifyDetached(badSig, m, kp.publicKey, engine)).toBe(false);
        if (n > 0) {
          const badMsg = m.slice();
          badMsg[0]! ^= 0x80;
          expect(verifyDetached(sig, badMsg, kp.publicKey, engine)).toBe(false);
        }
        const badPk = kp.publicKey.slice();
        badPk[3]! ^= 4;
        expect(verifyDetached(sig, m, badPk, engine)).toBe(false);
      }
    }
  });
});

describe('boxEasy / boxOpenEasy against crypto_box_easy', () => {
  it('is byte-identical in both directions for many lengths', { timeout: HEAVY_TIMEOUT_MS }, () => {
    const a = sodium.crypto_box_seed_keypair(fill(32, 11));
    const b = sodium.crypto_box_seed_keypair(fill(32, 12));
    expectBytes(
      boxBeforeNm(b.publicKey, a.privateKey),
      sodium.crypto_box_beforenm(b.publicKey, a.privateKey),
    );
    for (const engine of ENGINES) {
      expectBytes(
        boxBeforeNm(b.publicKey, a.privateKey, engine),
        sodium.crypto_box_beforenm(b.publicKey, a.privateKey),
      );
    }
    for (const n of LENGTHS) {
      const m = fill(n, n + 5);
      const nonce = fill(24, n + 6);
      const ours = boxEasy(m, nonce, b.publicKey, a.privateKey);
      expectBytes(ours, sodium.crypto_box_easy(m, nonce, b.publicKey, a.privateKey));
      expectBytes(sodium.crypto_box_open_easy(ours, nonce, a.publicKey, b.privateKey), m);
      const theirs = sodium.crypto_box_easy(m, nonce, a.publicKey, b.privateKey);
      expectBytes(boxOpenEasy(theirs, nonce, b.publicKey, a.privateKey), m);
    }
  });
});

describe('secretboxEasy against crypto_secretbox_easy', () => {
  it('is byte-identical in both directions for many lengths', { timeout: HEAVY_TIMEOUT_MS }, () => {
    const key = fill(32, 21);
    for (const n of LENGTHS) {
      const m = fill(n, n + 8);
      const nonce = fill(24, n + 9);
      const ours = secretboxEasy(m, nonce, key);
      expectBytes(ours, sodium.crypto_secretbox_easy(m, nonce, key));
      expectBytes(secretboxOpenEasy(sodium.crypto_secretbox_easy(m, nonce, key), nonce, key), m);
    }
  });
});

describe('sealedBoxSeal against crypto_box_seal', () => {
  it('opens in both directions for many lengths', { timeout: HEAVY_TIMEOUT_MS }, () => {
    const r = sodium.crypto_box_seed_keypair(fill(32, 31));
    for (const n of LENGTHS) {
      const m = fill(n, n + 10);
      const ours = sealedBoxSeal(m, r.publicKey);
      expect(ours.length).toBe(n + 48);
      expectBytes(sodium.crypto_box_seal_open(ours, r.publicKey, r.privateKey), m);
      expectBytes(sealedBoxOpen(sodium.crypto_box_seal(m, r.publicKey), r.publicKey, r.privateKey), m);
    }
  });
});

describe('aeadEncrypt against crypto_aead_chacha20poly1305_ietf', () => {
  it(
    'is byte-identical on every engine, with and without associated data',
    { timeout: HEAVY_TIMEOUT_MS },
    () => {
      const key = fill(32, 41);
      for (const n of LENGTHS) {
        const m = fill(n, n + 11);
        const nonce = fill(12, n + 12);
        const aad = n % 2 === 0 ? fill(13, n) : new Uint8Array(0);
        const ref = sodium.crypto_aead_chacha20poly1305_ietf_encrypt(m, aad, null, nonce, key);
        expectBytes(aeadEncrypt(key, nonce, m, aad), ref);
        expectBytes(aeadDecrypt(key, nonce, ref, aad), m);
        for (const engine of ENGINES) {
          expectBytes(aeadEncrypt(key, nonce, m, aad, engine), ref);
          expectBytes(aeadDecrypt(key, nonce, ref, aad, engine), m);
        }
      }
    },
  );
  it('sha256 (native) equals the noble reference', () => {
    for (const n of [0, 1, 55, 56, 64, 1000]) {
      const m = fill(n, n);
      expect(sha256(m)).toEqual(nobleSha256(m));
    }
  });
});
