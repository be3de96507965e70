import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ENGINES } from './engines.js';
import {
  aeadDecrypt,
  aeadEncrypt,
  boxEasy,
  boxOpenEasy,
  decryptString,
  encryptString,
  isCryptoError,
  sealedBoxOpen,
  sealedBoxSeal,
  secretboxEasy,
  secretboxOpenEasy,
  x25519PublicFromSecret,
} from '../src/index.js';
import { NUM_RUNS } from './prop-runs.js';

const key32 = fc.uint8Array({ minLength: 32, maxLength: 32 });
const nonce24 = fc.uint8Array({ minLength: 24, maxLength: 24 });
const nonce12 = fc.uint8Array({ minLength: 12, maxLength: 12 });
const message = fc.uint8Array({ maxLength: 300 });

/** Flips one bit of one byte chosen from `seed`; returns a copy. */
function flip(sealed: Uint8Array, index: number, bit: number): Uint8Array {
  const bad = sealed.slice();
  const i = index % bad.length;
  bad[i]! ^= 1 << (bit % 8);
  return bad;
}

function authFails(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (err) {
    return isCryptoError(err) && err.code === 'CRYPTO_AUTH_FAILED';
  }
}

describe('secretbox properties', () => {
  it('round-trips; any flipped bit or truncation gives CRYPTO_AUTH_FAILED', () => {
    fc.assert(
      fc.property(key32, nonce24, message, fc.nat(), fc.nat(7), (key, nonce, m, i, bit) => {
        const box = secretboxEasy(m, nonce, key);
        expect(secretboxOpenEasy(box, nonce, key)).toEqual(m);
        expect(authFails(() => secretboxOpenEasy(flip(box, i, bit), nonce, key))).toBe(true);
        expect(authFails(() => secretboxOpenEasy(box.subarray(0, i % box.length), nonce, key))).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('box properties', () => {
  it('round-trips between two parties; any flipped bit gives CRYPTO_AUTH_FAILED', () => {
    fc.assert(
      fc.property(key32, key32, nonce24, message, fc.nat(), fc.nat(7), (a, b, nonce, m, i, bit) => {
        const aPub = x25519PublicFromSecret(a);
        const bPub = x25519PublicFromSecret(b);
        const box = boxEasy(m, nonce, bPub, a);
        expect(boxOpenEasy(box, nonce, aPub, b)).toEqual(m);
        expect(authFails(() => boxOpenEasy(flip(box, i, bit), nonce, aPub, b))).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('sealed boxes round-trip; any flipped bit gives CRYPTO_AUTH_FAILED', () => {
    fc.assert(
      fc.property(key32, message, fc.nat(), fc.nat(7), (r, m, i, bit) => {
        const rPub = x25519PublicFromSecret(r);
        const sealed = sealedBoxSeal(m, rPub);
        expect(sealedBoxOpen(sealed, rPub, r)).toEqual(m);
        expect(authFails(() => sealedBoxOpen(flip(sealed, i, bit), rPub, r))).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('-2/ strings round-trip; any flipped bit of the decoded envelope gives CRYPTO_AUTH_FAILED', () => {
    fc.assert(
      fc.property(key32, key32, message, fc.nat(), fc.nat(7), (s, r, m, i, bit) => {
        const recipient = {
          purpose: 'authenticated',
          type: 'public',
          bytes: x25519PublicFromSecret(r),
        } as const;
        const sender = { purpose: 'authenticated', type: 'secret', bytes: s } as const;
        const tuple = { senderPublicKey: x25519PublicFromSecret(s), recipientSecretKey: r };
        const text = encryptString(m, recipient, sender);
        expect(decryptString(text, [tuple])).toEqual(m);
        const raw = new Uint8Array(Buffer.from(text.slice(3), 'base64'));
        const bad = `-2/${Buffer.from(flip(raw, i, bit)).toString('base64')}`;
        expect(authFails(() => decryptString(bad, [tuple]))).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('AEAD properties', () => {
  it('round-trips on every engine; any flipped bit gives CRYPTO_AUTH_FAILED', () => {
    fc.assert(
      fc.property(
        key32,
        nonce12,
        message,
        fc.uint8Array({ maxLength: 40 }),
        fc.nat(),
        fc.nat(7),
        (k, n, m, aad, i, bit) => {
          for (const engine of ENGINES) {
            const sealed = aeadEncrypt(k, n, m, aad, engine);
            expect(aeadDecrypt(k, n, sealed, aad, engine)).toEqual(m);
            expect(authFails(() => aeadDecrypt(k, n, flip(sealed, i, bit), aad, engine))).toBe(true);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
