// Curve25519 encodings shared by the key, box and edge-case tests.
import { ED25519_TORSION_SUBGROUP } from '@noble/curves/ed25519.js';
import { unhex } from '@org/test-utils';

export const P = 2n ** 255n - 19n;

/** 32-byte little-endian encoding of `n` (n < 2^256). */
export function le32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

function withTopBit(b: Uint8Array): Uint8Array {
  const c = b.slice();
  c[31]! |= 0x80;
  return c;
}

export interface NamedBytes {
  name: string;
  bytes: Uint8Array;
}

// libsodium's crypto_scalarmult_curve25519 blacklist (the u-coordinates of the small-order points
// and their non-canonical aliases), the same list as src/internal/curve25519.ts.
const U_VALUES: [string, bigint][] = [
  ['0 (order 4)', 0n],
  ['1 (order 1)', 1n],
  ['u8a (order 8)', 325606250916557431795983626356110631294008115727848805560023387167927233504n],
  ['u8b (order 8)', 39382357235489614581723060781553021112529911719440698176882885853963445705823n],
  ['p-1 (order 2)', P - 1n],
  ['p (= 0)', P],
  ['p+1 (= 1)', P + 1n],
];

/** Every small-order X25519 public key encoding, with the ignored top bit clear and set. */
export const X25519_SMALL_ORDER: NamedBytes[] = U_VALUES.flatMap(([name, u]) => [
  { name, bytes: le32(u) },
  { name: `${name}, top bit set`, bytes: withTopBit(le32(u)) },
]);

function uniqueByHex(list: NamedBytes[]): NamedBytes[] {
  const seen = new Set<string>();
  return list.filter((e) => {
    const h = Buffer.from(e.bytes).toString('hex');
    if (seen.has(h)) return false;
    seen.add(h);
    return true;
  });
}

/**
 * Every encoding of a small-order Ed25519 point with a canonical y (< p): the eight torsion points
 * and the sign-bit aliases of x = 0 (0100..80, ecff..ff).
 */
export const ED25519_SMALL_ORDER: NamedBytes[] = uniqueByHex(
  ED25519_TORSION_SUBGROUP.flatMap((h, i) => [
    { name: `torsion[${i}] ${h.slice(0, 8)}…`, bytes: unhex(h) },
    {
      name: `torsion[${i}] with sign bit flipped`,
      bytes: (() => {
        const b = unhex(h);
        b[31]! ^= 0x80;
        return b;
      })(),
    },
  ]),
);

/** Ed25519 encodings with y ≥ p (non-canonical), small-order aliases included. */
export const ED25519_NON_CANONICAL: NamedBytes[] = [
  { name: 'y = p (alias of 0)', bytes: le32(P) },
  { name: 'y = p, sign bit set', bytes: withTopBit(le32(P)) },
  { name: 'y = p+1 (alias of 1)', bytes: le32(P + 1n) },
  { name: 'y = p+1, sign bit set', bytes: withTopBit(le32(P + 1n)) },
  { name: 'y = p+2', bytes: le32(P + 2n) },
  { name: 'y = p+18', bytes: le32(P + 18n) },
  { name: 'y = 2^255-1, sign bit set', bytes: le32(2n ** 256n - 1n) },
];

/** y = 2: a canonical encoding that is not on the curve (x² is not a square). */
export const ED25519_OFF_CURVE: Uint8Array = le32(2n);
