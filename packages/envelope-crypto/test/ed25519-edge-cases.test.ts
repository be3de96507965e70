// docs/security-requirements.md S94: the public Ed25519 edge-case set (C2SP/CCTV ed25519/ed25519vectors.json,
// 914 vectors; provenance in testdata/README.md) run through the production verifier on both
// engines must give exactly libsodium's crypto_sign_verify_detached answer for every vector.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from './engines.js';
import { CryptoError, isCryptoError, parseKey, verifyDetached } from '../src/index.js';
import { ED25519_L } from '../src/internal/curve25519.js';
import { thrownBy, unhex } from '@org/test-utils';
import { loadSodium } from './sodium.js';
import { le32 } from './points.js';

interface EdgeVector {
  number: number;
  key: string;
  sig: string;
  msg: string;
  flags: string[] | null;
}

const FILE = new URL('../testdata/ed25519/ed25519vectors.json', import.meta.url);
/** sha256 of the upstream file, as recorded in testdata/README.md. */
const FILE_SHA256 = 'b38e84caf3e7e89170ff520292dbeae421b0a794c27408ce5ce973018fe3d7f9';
const raw = readFileSync(FILE);
const VECTORS = JSON.parse(raw.toString('utf8')) as EdgeVector[];

/** The vector numbers libsodium 1.0.18+ accepts (strict RFC 8032 with its small-order and canonical checks). */
const LIBSODIUM_ACCEPTS = [
  7, 29, 50, 117, 139, 161, 182, 249, 305, 411, 425, 438, 465, 473, 481, 489, 497, 511, 525, 538, 565, 573,
  581, 589, 597, 611, 625, 638, 665, 673, 681, 689, 697, 711, 725, 738, 765, 773, 781, 789, 797, 832, 899,
];

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

function sodiumVerify(sig: Uint8Array, msg: Uint8Array, key: Uint8Array): boolean {
  try {
    return sodium.crypto_sign_verify_detached(sig, msg, key);
  } catch {
    return false; // libsodium-wrappers throws on some malformed inputs; that is a rejection
  }
}

const enc = (s: string) => new TextEncoder().encode(s);

describe('ed25519vectors.json (C2SP/CCTV)', () => {
  it('is the recorded upstream file: 914 vectors, numbered in order', () => {
    expect(createHash('sha256').update(raw).digest('hex')).toBe(FILE_SHA256);
    expect(VECTORS).toHaveLength(914);
    VECTORS.forEach((v, i) => expect(v.number).toBe(i));
  });
});

describe('verifyDetached on the edge-case set (S94)', () => {
  it('returns exactly what libsodium returns for every vector, on every engine', () => {
    const accepted: number[] = [];
    const disagreements: string[] = [];
    for (const v of VECTORS) {
      const sig = unhex(v.sig);
      const key = unhex(v.key);
      const msg = enc(v.msg);
      const ref = sodiumVerify(sig, msg, key);
      if (ref) accepted.push(v.number);
      for (const engine of ENGINES) {
        const ours = verifyDetached(sig, msg, key, engine);
        if (ours !== ref) disagreements.push(`#${v.number} ${engine}: ours ${ours}, libsodium ${ref}`);
      }
    }
    expect(disagreements).toEqual([]);
    expect(accepted).toEqual(LIBSODIUM_ACCEPTS);
  });

  it('accepts only vectors with no small-order or non-canonical R or A, and no residue', () => {
    const rejectFlags = [
      'low_order_R',
      'low_order_A',
      'non_canonical_R',
      'non_canonical_A',
      'low_order_residue',
    ];
    for (const n of LIBSODIUM_ACCEPTS) {
      const flags = VECTORS[n]!.flags ?? [];
      expect(flags.filter((f) => rejectFlags.includes(f))).toEqual([]);
    }
  });

  it('rejects S + L (S ≥ L) for every accepted vector, as libsodium does', () => {
    for (const n of LIBSODIUM_ACCEPTS) {
      const v = VECTORS[n]!;
      const sig = unhex(v.sig);
      let s = 0n;
      for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]!);
      const bad = sig.slice();
      bad.set(le32(s + ED25519_L), 32);
      const msg = enc(v.msg);
      const key = unhex(v.key);
      expect(sodiumVerify(bad, msg, key)).toBe(false);
      expect(verifyDetached(bad, msg, key, 'native')).toBe(false);
      expect(verifyDetached(bad, msg, key, 'js')).toBe(false);
    }
  });
});

describe('parseKey on the edge-case public keys', () => {
  const keys = () => {
    const byKey = new Map<string, Set<string>>();
    for (const v of VECTORS) {
      const set = byKey.get(v.key) ?? new Set<string>();
      for (const f of v.flags ?? []) if (f.endsWith('_A')) set.add(f);
      byKey.set(v.key, set);
    }
    return [...byKey.entries()];
  };

  it('refuses every small-order signer key (all-zero included): CRYPTO_WEAK_KEY, or CRYPTO_INVALID_PUBLIC_KEY when y ≥ p', () => {
    let lowOrder = 0;
    for (const [keyHex, flags] of keys()) {
      if (!flags.has('low_order_A')) continue;
      lowOrder++;
      const err = thrownBy(() => parseKey({ id: 'signer', purpose: 'sign', type: 'public', keyHex }));
      expect(isCryptoError(err)).toBe(true);
      const yAtLeastP = /^(ed|ee)f{60}[7f]f$/.test(keyHex);
      expect((err as CryptoError).code).toBe(yAtLeastP ? 'CRYPTO_INVALID_PUBLIC_KEY' : 'CRYPTO_WEAK_KEY');
    }
    expect(lowOrder).toBeGreaterThanOrEqual(10);
    expect(() => parseKey({ purpose: 'sign', type: 'public', keyHex: '00'.repeat(32) })).toThrowCode(
      CryptoError,
      'CRYPTO_WEAK_KEY',
    );
  });

  it('accepts the mixed-order keys libsodium verifies against (one Ed25519 rule)', () => {
    for (const [keyHex, flags] of keys()) {
      if (flags.has('low_order_A') || flags.has('non_canonical_A')) continue;
      expect(parseKey({ purpose: 'sign', type: 'public', keyHex }).bytes).toEqual(unhex(keyHex));
    }
  });
});
