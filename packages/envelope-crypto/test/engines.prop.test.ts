// The three engines ('sodium' = libsodium via sodium-native, 'native' = node:crypto, 'js' = noble)
// must agree on every input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aeadDecrypt,
  aeadEncrypt,
  ed25519PublicFromSeed,
  isCryptoError,
  signDetached,
  verifyDetached,
  x25519SharedSecret,
} from '../src/index.js';
import { ENGINES } from './engines.js';
import { NUM_RUNS } from './prop-runs.js';

const key32 = fc.uint8Array({ minLength: 32, maxLength: 32 });
const message = fc.uint8Array({ maxLength: 200 });

function outcome(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (err) {
    return isCryptoError(err) ? err.code : err;
  }
}

describe('engine agreement', () => {
  it('signDetached gives the same signature; verifyDetached the same answer, for good and mangled signatures', () => {
    fc.assert(
      fc.property(key32, message, fc.nat(63), fc.nat(255), (seed, m, i, x) => {
        const sk = new Uint8Array([...seed, ...ed25519PublicFromSeed(seed)]);
        const sig = signDetached(m, sk, 'native');
        expect(signDetached(m, sk, 'js')).toEqual(sig);
        expect(signDetached(m, sk, 'sodium')).toEqual(sig);
        const pk = sk.subarray(32);
        for (const engine of ENGINES) expect(verifyDetached(sig, m, pk, engine)).toBe(true);
        const bad = sig.slice();
        bad[i]! ^= x || 1;
        const want = verifyDetached(bad, m, pk, 'native');
        expect(verifyDetached(bad, m, pk, 'js')).toBe(want);
        expect(verifyDetached(bad, m, pk, 'sodium')).toBe(want);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('verifyDetached agrees on random signatures and keys (almost all invalid)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 64, maxLength: 64 }), message, key32, (sig, m, pk) => {
        const want = verifyDetached(sig, m, pk, 'native');
        expect(verifyDetached(sig, m, pk, 'js')).toBe(want);
        expect(verifyDetached(sig, m, pk, 'sodium')).toBe(want);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('x25519SharedSecret gives the same secret or the same code for any pair of 32-byte strings', () => {
    fc.assert(
      fc.property(key32, key32, (sk, pk) => {
        const want = outcome(() => x25519SharedSecret(sk, pk, 'native'));
        expect(outcome(() => x25519SharedSecret(sk, pk, 'js'))).toEqual(want);
        expect(outcome(() => x25519SharedSecret(sk, pk, 'sodium'))).toEqual(want);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('aeadEncrypt / aeadDecrypt agree byte for byte, and on random (forged) input', () => {
    fc.assert(
      fc.property(
        key32,
        fc.uint8Array({ minLength: 12, maxLength: 12 }),
        message,
        fc.uint8Array({ maxLength: 30 }),
        fc.uint8Array({ maxLength: 60 }),
        (k, n, m, aad, forged) => {
          const a = aeadEncrypt(k, n, m, aad, 'native');
          const forgedOutcome = outcome(() => aeadDecrypt(k, n, forged, aad, 'native'));
          for (const engine of ENGINES) {
            expect(aeadEncrypt(k, n, m, aad, engine)).toEqual(a);
            expect(aeadDecrypt(k, n, a, aad, engine)).toEqual(m);
            expect(outcome(() => aeadDecrypt(k, n, forged, aad, engine))).toEqual(forgedOutcome);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
