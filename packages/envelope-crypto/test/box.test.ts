import { beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from './engines.js';
import {
  BOX_MAC_BYTES,
  BOX_NONCE_BYTES,
  CryptoError,
  SEAL_BYTES,
  boxBeforeNm,
  boxEasy,
  boxOpenEasy,
  sealedBoxOpen,
  sealedBoxSeal,
  secretboxEasy,
  secretboxOpenEasy,
  x25519SharedSecret,
} from '../src/index.js';
import { hasSmallOrderMontgomeryEncoding } from '../src/internal/curve25519.js';
import { offsetView } from '@org/test-utils';
import { fill, loadSodium, sodiumRefuses } from './sodium.js';
import { X25519_SMALL_ORDER, le32 } from './points.js';

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

const alice = () => sodium.crypto_box_seed_keypair(fill(32, 51));
const bob = () => sodium.crypto_box_seed_keypair(fill(32, 52));

/** Every single-byte flip of `sealed` (one bit per position, rotating). */
function* flips(sealed: Uint8Array): Generator<Uint8Array> {
  for (let i = 0; i < sealed.length; i++) {
    const bad = sealed.slice();
    bad[i]! ^= 1 << (i % 8);
    yield bad;
  }
}

describe('x25519SharedSecret', () => {
  it('equals crypto_scalarmult on every engine, also for views and pooled Buffers (S118)', () => {
    const a = alice();
    const b = bob();
    const ref = sodium.crypto_scalarmult(a.privateKey, b.publicKey);
    for (const engine of ENGINES) {
      expect(x25519SharedSecret(a.privateKey, b.publicKey, engine)).toEqual(ref);
      expect(x25519SharedSecret(offsetView(a.privateKey), offsetView(b.publicKey, 3), engine)).toEqual(ref);
      expect(x25519SharedSecret(Buffer.from(a.privateKey), Buffer.from(b.publicKey), engine)).toEqual(ref);
    }
  });

  it('accepts a non-canonical u (top bit set, u ≥ p) exactly as libsodium does', () => {
    const a = alice();
    const high = bob().publicKey.slice();
    high[31]! |= 0x80;
    const P = 2n ** 255n - 19n;
    for (const pk of [high, le32(P + 3n)]) {
      const ref = sodium.crypto_scalarmult(a.privateKey, pk);
      for (const engine of ENGINES) expect(x25519SharedSecret(a.privateKey, pk, engine)).toEqual(ref);
    }
  });

  it.each(X25519_SMALL_ORDER.map((u) => [u.name, u.bytes] as const))(
    'rejects the small-order point %s with CRYPTO_WEAK_KEY on every engine; libsodium refuses it too',
    (_name, u) => {
      // The list in src/internal/curve25519.ts is right: libsodium's crypto_scalarmult fails for it.
      expect(hasSmallOrderMontgomeryEncoding(u)).toBe(true);
      expect(sodiumRefuses(() => sodium.crypto_scalarmult(alice().privateKey, u))).toBe(true);
      for (const engine of ENGINES) {
        expect(() => x25519SharedSecret(alice().privateKey, u, engine)).toThrowCode(
          CryptoError,
          'CRYPTO_WEAK_KEY',
        );
        expect(() => boxBeforeNm(u, alice().privateKey, engine)).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
      }
    },
  );

  it('gives an all-zero result for each small-order u under the raw ladder (why the list is needed)', () => {
    // Without the check, every scalar yields zero: the shared secret carries no key.
    for (const { bytes } of X25519_SMALL_ORDER) {
      for (const seed of [1, 2, 3]) {
        const sk = fill(32, seed);
        let zero = true;
        try {
          zero = sodium.crypto_scalarmult(sk, bytes).every((x) => x === 0);
        } catch {
          zero = true;
        }
        expect(zero).toBe(true);
      }
    }
  });

  it('throws RangeError for wrong lengths (caller bug)', () => {
    expect(() => x25519SharedSecret(fill(31, 1), bob().publicKey)).toThrow(RangeError);
    expect(() => x25519SharedSecret(fill(32, 1), fill(33, 1))).toThrow(RangeError);
  });
});

describe('boxBeforeNm', () => {
  it('equals crypto_box_beforenm on every engine and is symmetric', () => {
    const a = alice();
    const b = bob();
    const ref = sodium.crypto_box_beforenm(b.publicKey, a.privateKey);
    for (const engine of ENGINES) {
      expect(boxBeforeNm(b.publicKey, a.privateKey, engine)).toEqual(ref);
      expect(boxBeforeNm(a.publicKey, b.privateKey, engine)).toEqual(ref);
    }
  });
});

describe('boxEasy / boxOpenEasy', () => {
  it('round-trips and equals crypto_box_easy for views and pooled Buffers (S118)', () => {
    const a = alice();
    const b = bob();
    const m = fill(77, 1);
    const nonce = fill(BOX_NONCE_BYTES, 2);
    const ref = sodium.crypto_box_easy(m, nonce, b.publicKey, a.privateKey);
    expect(
      boxEasy(offsetView(m), offsetView(nonce, 1), offsetView(b.publicKey, 2), offsetView(a.privateKey, 3)),
    ).toEqual(ref);
    expect(
      boxEasy(Buffer.from(m), Buffer.from(nonce), Buffer.from(b.publicKey), Buffer.from(a.privateKey)),
    ).toEqual(ref);
    expect(
      boxOpenEasy(offsetView(ref), offsetView(nonce), offsetView(a.publicKey), offsetView(b.privateKey)),
    ).toEqual(m);
  });

  it('rejects every single-byte flip of a short box with CRYPTO_AUTH_FAILED', () => {
    const a = alice();
    const b = bob();
    const nonce = fill(24, 3);
    const box = boxEasy(fill(5, 4), nonce, b.publicKey, a.privateKey);
    expect(box).toHaveLength(5 + BOX_MAC_BYTES);
    for (const bad of flips(box)) {
      expect(() => boxOpenEasy(bad, nonce, a.publicKey, b.privateKey)).toThrowCode(
        CryptoError,
        'CRYPTO_AUTH_FAILED',
      );
    }
  });

  it('rejects a flipped nonce, the wrong sender and the wrong recipient with CRYPTO_AUTH_FAILED', () => {
    const a = alice();
    const b = bob();
    const c = sodium.crypto_box_seed_keypair(fill(32, 53));
    const nonce = fill(24, 5);
    const box = boxEasy(fill(40, 6), nonce, b.publicKey, a.privateKey);
    const badNonce = nonce.slice();
    badNonce[23]! ^= 0x80;
    expect(() => boxOpenEasy(box, badNonce, a.publicKey, b.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    expect(() => boxOpenEasy(box, nonce, c.publicKey, b.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
    expect(() => boxOpenEasy(box, nonce, a.publicKey, c.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
  });

  it.each([0, 1, 15])('rejects a %i-byte box (shorter than the MAC) with CRYPTO_AUTH_FAILED', (n) => {
    const a = alice();
    const b = bob();
    expect(() => boxOpenEasy(new Uint8Array(n), fill(24, 1), a.publicKey, b.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
  });

  it('opens the empty message (a 16-byte box)', () => {
    const a = alice();
    const b = bob();
    const box = boxEasy(new Uint8Array(0), fill(24, 7), b.publicKey, a.privateKey);
    expect(box).toHaveLength(16);
    expect(boxOpenEasy(box, fill(24, 7), a.publicKey, b.privateKey)).toEqual(new Uint8Array(0));
  });

  it('refuses a small-order recipient with CRYPTO_WEAK_KEY', () => {
    expect(() => boxEasy(fill(3, 1), fill(24, 1), new Uint8Array(32), alice().privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_WEAK_KEY',
    );
  });

  it('throws RangeError for a 12-byte nonce (caller bug)', () => {
    expect(() => boxEasy(fill(3, 1), fill(12, 1), bob().publicKey, alice().privateKey)).toThrow(RangeError);
  });
});

describe('secretboxEasy / secretboxOpenEasy', () => {
  it('round-trips with views and pooled Buffers (S118) and equals crypto_secretbox_easy', () => {
    const key = fill(32, 61);
    const nonce = fill(24, 62);
    const m = fill(100, 63);
    const ref = sodium.crypto_secretbox_easy(m, nonce, key);
    expect(secretboxEasy(offsetView(m), offsetView(nonce), offsetView(key))).toEqual(ref);
    expect(secretboxEasy(Buffer.from(m), Buffer.from(nonce), Buffer.from(key))).toEqual(ref);
    expect(secretboxOpenEasy(offsetView(ref), offsetView(nonce, 2), offsetView(key, 4))).toEqual(m);
  });

  it('rejects every single-byte flip of a short box with CRYPTO_AUTH_FAILED', () => {
    const key = fill(32, 64);
    const nonce = fill(24, 65);
    const box = secretboxEasy(fill(7, 66), nonce, key);
    for (const bad of flips(box)) {
      expect(() => secretboxOpenEasy(bad, nonce, key)).toThrowCode(CryptoError, 'CRYPTO_AUTH_FAILED');
    }
  });

  it('rejects truncation and a wrong key with CRYPTO_AUTH_FAILED', () => {
    const key = fill(32, 67);
    const nonce = fill(24, 68);
    const box = secretboxEasy(fill(30, 69), nonce, key);
    for (const n of [0, 4, 15, 16, box.length - 1]) {
      expect(() => secretboxOpenEasy(box.subarray(0, n), nonce, key)).toThrowCode(
        CryptoError,
        'CRYPTO_AUTH_FAILED',
      );
    }
    expect(() => secretboxOpenEasy(box, nonce, fill(32, 70))).toThrowCode(CryptoError, 'CRYPTO_AUTH_FAILED');
  });

  it('throws RangeError for a 16-byte key (caller bug)', () => {
    expect(() => secretboxEasy(fill(1, 1), fill(24, 1), fill(16, 1))).toThrow(RangeError);
  });
});

describe('sealedBoxSeal / sealedBoxOpen', () => {
  it('seals to a fresh ephemeral key each time; both open, and libsodium opens them', () => {
    const r = bob();
    const m = fill(12, 71);
    const s1 = sealedBoxSeal(m, r.publicKey);
    const s2 = sealedBoxSeal(offsetView(m), offsetView(r.publicKey));
    expect(s1).toHaveLength(12 + SEAL_BYTES);
    expect(s1.subarray(0, 32)).not.toEqual(s2.subarray(0, 32));
    for (const s of [s1, s2]) {
      expect(sealedBoxOpen(s, r.publicKey, r.privateKey)).toEqual(m);
      expect(sealedBoxOpen(offsetView(s), Buffer.from(r.publicKey), offsetView(r.privateKey))).toEqual(m);
      expect(sodium.crypto_box_seal_open(s, r.publicKey, r.privateKey)).toEqual(m);
    }
  });

  it('rejects every single-byte flip of a short sealed box with CRYPTO_AUTH_FAILED', () => {
    const r = bob();
    const sealed = sodium.crypto_box_seal(fill(3, 72), r.publicKey);
    for (const bad of flips(sealed)) {
      expect(() => sealedBoxOpen(bad, r.publicKey, r.privateKey)).toThrowCode(
        CryptoError,
        'CRYPTO_AUTH_FAILED',
      );
    }
  });

  it.each([0, 1, 32, 47])('rejects a %i-byte input (shorter than 48) with CRYPTO_AUTH_FAILED', (n) => {
    const r = bob();
    expect(() => sealedBoxOpen(new Uint8Array(n), r.publicKey, r.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
  });

  it('reports a small-order ephemeral key as CRYPTO_AUTH_FAILED (one failure class)', () => {
    const r = bob();
    const sealed = sodium.crypto_box_seal(fill(3, 73), r.publicKey);
    for (const { bytes } of X25519_SMALL_ORDER) {
      const bad = sealed.slice();
      bad.set(bytes, 0);
      expect(() => sealedBoxOpen(bad, r.publicKey, r.privateKey)).toThrowCode(
        CryptoError,
        'CRYPTO_AUTH_FAILED',
      );
    }
  });

  it('refuses to seal to a small-order recipient with CRYPTO_WEAK_KEY', () => {
    expect(() => sealedBoxSeal(fill(3, 1), le32(1n))).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
  });

  it('rejects the wrong recipient with CRYPTO_AUTH_FAILED', () => {
    const sealed = sealedBoxSeal(fill(9, 74), bob().publicKey);
    const a = alice();
    expect(() => sealedBoxOpen(sealed, a.publicKey, a.privateKey)).toThrowCode(
      CryptoError,
      'CRYPTO_AUTH_FAILED',
    );
  });
});
