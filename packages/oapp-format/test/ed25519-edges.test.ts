// SPEC.md §5.1 (S177): the Ed25519 edge records of the negative corpus are refused exactly as libsodium's
// crypto_sign_verify_detached refuses them, on the same bytes (the signing message is rebuilt from the package's
// own STATEMENT bytes and signText), and most of them satisfy the bare equation, so each check is needed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sodium from 'libsodium-wrappers-sumo';
import { beforeAll, describe, expect, it } from 'vitest';
import { inspectPackage, verifyPackage } from '../src/index.js';
import { signingMessage, verifyRecord } from '../src/internal.js';
import { L, le, le32 } from '../testdata/ed25519-edges.js';
import * as fx from './fixtures.js';
import { sectionsOf } from './package-surgery.js';

const negative = new URL('../testdata/negative/', import.meta.url).pathname;

/**
 * File, index of the edge record, whether the bare equation [S mod L]B − [k]A = R holds for it (`null`: not
 * claimed; nobody knows the discrete log of the y ≥ p point, so that record is a valid signature of another key).
 */
const CASES = [
  ['POLICY_SIGNATURE_INVALID--vendor-small-order-r.oapp', 0, 'small-order R', true],
  ['POLICY_SIGNATURE_INVALID--vendor-s-plus-l.oapp', 0, 'S + L (S ≥ L, below 2^253)', true],
  ['POLICY_SIGNATURE_INVALID--vendor-s-plus-8l-top-bits-set.oapp', 0, 'S + 8L (bits 253–255 set)', true],
  ['POLICY_SIGNER_THRESHOLD_NOT_MET--reviewer-b-replaced-by-small-order-a.oapp', 2, 'small-order A', true],
  [
    'POLICY_SIGNER_THRESHOLD_NOT_MET--reviewer-b-replaced-by-non-canonical-a.oapp',
    2,
    'non-canonical A (y ≥ p)',
    null,
  ],
] as const;

beforeAll(async () => {
  await sodium.ready;
});

function libsodiumVerifies(sig: Uint8Array, m: Uint8Array, pk: Uint8Array): boolean {
  try {
    return sodium.crypto_sign_verify_detached(sig, m, pk);
  } catch {
    return false; // libsodium-wrappers throws where the C function returns -1: a refusal
  }
}

/**
 * The bare RFC 8032 equation with no check at all: [S mod L]B − [k]A encodes to R. Computed with libsodium's
 * Ed25519 group operations (the identity is allowed as an operand here: A = identity gives [k]A = identity).
 */
function bareEquationHolds(sig: Uint8Array, m: Uint8Array, pk: Uint8Array): boolean {
  const r = sig.subarray(0, 32);
  const s = le32(le(sig.subarray(32, 64)) % L);
  const k = le32(le(sodium.crypto_hash_sha512(new Uint8Array([...r, ...pk, ...m]))) % L);
  const identity = le32(1n);
  const sB = s.every((b) => b === 0) ? identity : sodium.crypto_scalarmult_ed25519_base_noclamp(s);
  if (pk.every((b, i) => b === identity[i])) return Buffer.from(sB).equals(Buffer.from(r));
  const kA = sodium.crypto_scalarmult_ed25519_noclamp(k, pk);
  return Buffer.from(sodium.crypto_core_ed25519_sub(sB, kA)).equals(Buffer.from(r));
}

describe('S177 Ed25519 edge records in whole packages (testdata/negative)', () => {
  for (const [file, index, what, equationHolds] of CASES) {
    it(`S177 ${what}: refused as libsodium refuses it, byte for byte, and by verifyPackage with ${file.split('--')[0]}`, async () => {
      const bytes = new Uint8Array(readFileSync(join(negative, file)));
      const statementBytes = sectionsOf(bytes).statement.value;
      const inspection = await inspectPackage(bytes);
      const records = inspection.signatures;
      expect(records).toHaveLength(3);
      records.forEach((rec, i) => {
        const signature = sectionsOf(bytes).signatures.value;
        // Re-read the raw record: key ‖ u16 length ‖ text ‖ signature.
        let off = 0;
        for (let j = 0; j < i; j++)
          off += 98 + new DataView(signature.buffer, signature.byteOffset).getUint16(off + 32);
        const len = new DataView(signature.buffer, signature.byteOffset).getUint16(off + 32);
        const pk = signature.slice(off, off + 32);
        const text = signature.slice(off + 34, off + 34 + len);
        const sig = signature.slice(off + 34 + len, off + 98 + len);
        const m = signingMessage('app', statementBytes, text, 1);
        const ours = verifyRecord(
          'app',
          statementBytes,
          { publicKey: pk, signText: new TextDecoder().decode(text), signature: sig },
          1,
        );
        expect(ours, `record ${i}`).toBe(libsodiumVerifies(sig, m, pk));
        expect(rec.valid, `record ${i}`).toBe(ours);
        if (i === index) {
          expect(ours).toBe(false);
          expect(rec.status).toBe('invalid');
          if (equationHolds !== null) expect(bareEquationHolds(sig, m, pk)).toBe(equationHolds);
        } else {
          expect(ours).toBe(true);
        }
      });
      const policy = fx.vendorPolicy({
        additionalSigners: [fx.trusted(fx.reviewerA), fx.trusted(fx.reviewerB), fx.trusted(fx.reviewerC)],
        requiredAdditionalSignerCount: 2,
      });
      await expect(verifyPackage(bytes, { policy })).rejects.toThrowCode('OappError', file.split('--')[0]!);
    });
  }

  it('S177 the unchanged records of the same signers verify (the edits alone make the difference)', async () => {
    const valid = new Uint8Array(
      readFileSync(new URL('../testdata/vectors/app-minimal.oapp', import.meta.url)),
    );
    expect((await inspectPackage(valid)).signatures.map((s) => s.valid)).toEqual([true, true, true]);
  });
});
