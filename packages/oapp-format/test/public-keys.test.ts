// SPEC.md §2 (S176): a public key gets one code wherever it appears. testdata/vectors/public-keys.json lists the
// keys and their code; this runs each through every position the production code has: key text (envelope-crypto's
// parseKey), a policy list (validatePolicy, also inside verifyPackage), HEADER `packager` (verifyPackage), and a
// writer's recipient (createPackage, encryptBootstrap).
import { readFileSync } from 'node:fs';
import { CryptoError, decodeHex, keyToHex, parseKey, type Key } from '@org/envelope-crypto';
import { thrownBy } from '@org/test-utils';
import { describe, expect, it } from 'vitest';
import { createPackage, encryptBootstrap, validatePolicy, verifyPackage } from '../src/index.js';
import { base } from '../testdata/negative-cases.js';
import { rogue } from '../testdata/rogue.js';
import * as fx from './fixtures.js';

interface KeyVector {
  name: string;
  purpose: 'authenticated' | 'sign';
  keyHex: string;
  code: string | null;
}
const { keys } = JSON.parse(
  readFileSync(new URL('../testdata/vectors/public-keys.json', import.meta.url), 'utf8'),
) as { keys: KeyVector[] };

/** The code a call fails with, or null when it succeeds. */
function codeOf(fn: () => unknown): string | null {
  const err = thrownBy(fn) as { code?: string } | undefined;
  return err === undefined ? null : (err.code ?? 'an error without a code');
}
async function codeOfAsync(fn: () => Promise<unknown>): Promise<string | null> {
  try {
    await fn();
    return null;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

const rawKey = (v: KeyVector): Key => ({
  purpose: v.purpose,
  type: 'public',
  bytes: decodeHex(v.keyHex, 32),
  id: v.name,
});

describe('S176 public keys: one documented code in every position (testdata/vectors/public-keys.json)', () => {
  it('lists weak, non-canonical and valid keys of both purposes', () => {
    const codes = new Set(keys.map((k) => `${k.purpose} ${k.code}`));
    for (const c of [
      'authenticated null',
      'authenticated CRYPTO_INVALID_PUBLIC_KEY',
      'authenticated CRYPTO_WEAK_KEY',
    ])
      expect(codes).toContain(c);
  });

  for (const v of keys) {
    describe(`${v.purpose} key ${v.name} → ${v.code ?? 'accepted'}`, () => {
      it('S176 key text (parseKey)', () => {
        const code = codeOf(() =>
          parseKey({ id: 'k', purpose: v.purpose, type: 'public', keyHex: v.keyHex }),
        );
        expect(code).toBe(v.code);
        if (code !== null)
          expect(
            thrownBy(() => parseKey({ purpose: v.purpose, type: 'public', keyHex: v.keyHex })),
          ).toBeInstanceOf(CryptoError);
      });

      it('S176 a policy list (validatePolicy), and verifyPackage with that policy', async () => {
        const t = { id: 'k', publicKey: decodeHex(v.keyHex, 32) };
        const policy =
          v.purpose === 'authenticated'
            ? fx.vendorPolicy({
                packagerIdentities:
                  v.keyHex === keyToHex(fx.vendorPackager.publicKey)
                    ? [t]
                    : [fx.trusted(fx.vendorPackager), t],
              })
            : fx.vendorPolicy({ requiredSigners: [t] });
        expect(codeOf(() => validatePolicy(policy))).toBe(v.code);
        const pkg = rogue(base('s176-policy'));
        expect(await codeOfAsync(() => verifyPackage(pkg, { policy }))).toBe(v.code);
      });

      if (v.purpose !== 'authenticated') return;

      it('S176 HEADER packager (verifyPackage, SPEC.md §6.2 step 10)', async () => {
        const pkg = rogue(base(`s176-${v.keyHex}`, { header: (h) => ({ ...h, packager: v.keyHex }) }));
        const trusted = { id: 'k', publicKey: decodeHex(v.keyHex, 32) };
        // The policy trusts the key itself when the key is acceptable, so only its form can refuse the package.
        const policy = fx.vendorPolicy(v.code === null ? { packagerIdentities: [trusted] } : {});
        expect(await codeOfAsync(() => verifyPackage(pkg, { policy }))).toBe(v.code);
      });

      it('S176 a writer recipient (createPackage, encryptBootstrap)', () => {
        const write = () =>
          createPackage({
            packageId: 'p',
            content: new Uint8Array(1),
            packagerSecretKey: fx.vendorPackager.secretKey,
            recipients: [rawKey(v)],
          });
        expect(codeOf(write)).toBe(v.code);
        expect(
          codeOf(() =>
            encryptBootstrap(new Uint8Array(1), {
              packagerSecretKey: fx.vendorPackager.secretKey,
              recipients: [rawKey(v)],
            }),
          ),
        ).toBe(v.code);
      });
    });
  }
});
