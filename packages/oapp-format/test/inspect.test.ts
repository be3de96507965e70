import { describe, expect, it } from 'vitest';
import { keyToHex } from '@org/envelope-crypto';
import { OappError, createPackage, fingerprint, inspectPackage } from '../src/index.js';
import {
  FIXED_TIME,
  WORKFLOW,
  deployment,
  otherDeployment,
  reviewerA,
  customerSigner,
  trusted,
  vendorPackager,
  vendorPolicy,
  vendorSigner,
} from './fixtures.js';
import { flipByte, sectionsOf } from './package-surgery.js';

const pkg = createPackage({
  packageId: 'hello-app',
  content: WORKFLOW,
  packagerSecretKey: vendorPackager.secretKey,
  recipients: [deployment.publicKey, otherDeployment.publicKey],
  signers: [
    { secretKey: vendorSigner.secretKey, signText: 'vendor' },
    { secretKey: reviewerA.secretKey, signText: 'review' },
  ],
  license: { tier: 'gold' },
  createdAt: FIXED_TIME,
});

describe('inspectPackage', () => {
  it('shows every field without a secret key', async () => {
    const info = await inspectPackage(pkg);
    expect(info).toMatchObject({
      format: 'oapp/v2',
      version: 2,
      formatVersion: 2,
      kind: 'app',
      packageId: 'hello-app',
      sequence: Math.floor(Date.parse('2026-11-01T12:00:00.000Z') / 1000),
      createdAt: '2026-11-01T12:00:00.000Z',
      expiresAt: null,
      rollback: null,
      content: { mediaType: 'application/vnd.oapp.workflow+json', size: WORKFLOW.length },
      packager: {
        publicKeyHex: keyToHex(vendorPackager.publicKey),
        fingerprint: fingerprint(vendorPackager.publicKey.bytes),
      },
      recipients: [
        { fingerprint: fingerprint(deployment.publicKey.bytes) },
        { fingerprint: fingerprint(otherDeployment.publicKey.bytes) },
      ],
      license: { tier: 'gold' },
      envelope: [],
    });
    expect(info.signatures.map((s) => [s.signText, s.valid, s.fingerprint])).toEqual([
      ['vendor', true, fingerprint(vendorSigner.publicKey.bytes)],
      ['review', true, fingerprint(reviewerA.publicKey.bytes)],
    ]);
  });
  it('reads from an async iterable source', async () => {
    async function* source() {
      await Promise.resolve();
      for (let i = 0; i < pkg.length; i += 100) yield pkg.subarray(i, i + 100);
    }
    expect((await inspectPackage(source())).packageId).toBe('hello-app');
  });

  it('reports a broken signature as invalid instead of failing', async () => {
    const i = sectionsOf(pkg).signatures.valueOffset + 32 + 2 + 'vendor'.length + 5;
    const info = await inspectPackage(flipByte(pkg, i));
    expect(info.signatures.map((s) => s.valid)).toEqual([false, true]);
  });
  it('rejects malformed packages with FORMAT codes', async () => {
    await expect(inspectPackage(pkg.slice(0, 30))).rejects.toThrowCode(OappError, 'FORMAT_TRUNCATED');
    await expect(inspectPackage(new TextEncoder().encode('PK\x03\x04'))).rejects.toThrowCode(
      OappError,
      'FORMAT_BAD_MAGIC',
    );
  });
});

describe('S178 inspectPackage marks signers against a given policy (SPEC.md §6.3)', () => {
  const selfSigned = createPackage({
    packageId: 'hello-app',
    content: WORKFLOW,
    packagerSecretKey: vendorPackager.secretKey,
    recipients: [deployment.publicKey],
    signers: [
      { secretKey: vendorSigner.secretKey, signText: 'released by vendor' },
      { secretKey: reviewerA.secretKey, signText: 'reviewed' },
      { secretKey: customerSigner.secretKey, signText: 'approved by the security team' },
    ],
    createdAt: FIXED_TIME,
  });

  it('S178 without a policy: every valid record is an unknown signer, never "valid" alone', async () => {
    const info = await inspectPackage(selfSigned);
    expect(info.signatures.map((s) => [s.valid, s.signer, s.signerId, s.status])).toEqual([
      [true, 'unknown', null, 'unknown-signer'],
      [true, 'unknown', null, 'unknown-signer'],
      [true, 'unknown', null, 'unknown-signer'],
    ]);
  });

  it('S178 with a policy: named keys get their role and id; a self-signed record of another key stays unknown', async () => {
    const policy = vendorPolicy({ additionalSigners: [trusted(reviewerA)] });
    const info = await inspectPackage(selfSigned, { policy });
    expect(info.signatures.map((s) => [s.signText, s.valid, s.signer, s.signerId, s.status])).toEqual([
      ['released by vendor', true, 'required', 'vendor-signer', 'trusted'],
      ['reviewed', true, 'additional', 'reviewer-a', 'trusted'],
      ['approved by the security team', true, 'unknown', null, 'unknown-signer'],
    ]);
  });

  it('S178 an invalid record is invalid whoever its key is; the policy given is validated', async () => {
    const i = sectionsOf(selfSigned).signatures.valueOffset + 32 + 2 + 'released by vendor'.length + 5;
    const info = await inspectPackage(flipByte(selfSigned, i), { policy: vendorPolicy() });
    expect(info.signatures.map((s) => s.status)).toEqual(['invalid', 'unknown-signer', 'unknown-signer']);
    await expect(inspectPackage(selfSigned, { policy: vendorPolicy({ packageId: '' }) })).rejects.toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
  });
});
