import { describe, expect, it } from 'vitest';
import { CryptoError } from '@org/envelope-crypto';
import { OappError, createPackage, inspectPackage, openPackage } from '../src/index.js';
import {
  FIXED_TIME,
  WORKFLOW,
  deployment,
  otherDeployment,
  vendorPackager,
  vendorPolicy,
  vendorSigner,
} from './fixtures.js';

function make(overrides: Partial<Parameters<typeof createPackage>[0]> = {}) {
  return createPackage({
    packageId: 'hello-app',
    content: WORKFLOW,
    packagerSecretKey: vendorPackager.secretKey,
    recipients: [deployment.publicKey, otherDeployment.publicKey],
    signers: [{ secretKey: vendorSigner.secretKey, signText: 'released by vendor' }],
    createdAt: FIXED_TIME,
    ...overrides,
  });
}

describe('createPackage', () => {
  it('makes a package every recipient opens to the exact content', async () => {
    const pkg = make();
    for (const r of [deployment, otherDeployment]) {
      const opened = await openPackage(pkg, { policy: vendorPolicy(), recipientSecretKey: r.secretKey });
      expect(opened.content).toEqual(WORKFLOW);
      expect(opened.signers.required.map((s) => s.id)).toEqual(['vendor-signer']);
    }
  });

  it('S110: packaging twice gives different file keys, nonces and ciphertext, both open', async () => {
    const a = make();
    const b = make();
    const ia = await inspectPackage(a);
    const ib = await inspectPackage(b);
    expect(ia.payload.ciphertextSha256).not.toBe(ib.payload.ciphertextSha256);
    expect(ia.content).toEqual(ib.content);
    expect(Buffer.compare(a, b)).not.toBe(0);
    for (const p of [a, b]) {
      expect(
        (await openPackage(p, { policy: vendorPolicy(), recipientSecretKey: deployment.secretKey })).content,
      ).toEqual(WORKFLOW);
    }
  });

  it('rejects no recipients, duplicate recipients and a bad chunk size with FORMAT_BAD_ARGUMENT', () => {
    expect(() => make({ recipients: [] })).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() => make({ recipients: [deployment.publicKey, deployment.publicKey] })).toThrowCode(
      OappError,
      'FORMAT_BAD_ARGUMENT',
    );
    expect(() => make({ chunkSize: 1000 })).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() => make({ chunkSize: 2 ** 21 })).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
  });

  it('rejects 1025 recipients with FORMAT_TOO_MANY_RECIPIENTS and a license that is not an object', () => {
    expect(() => make({ recipients: Array.from({ length: 1025 }, () => deployment.publicKey) })).toThrowCode(
      OappError,
      'FORMAT_TOO_MANY_RECIPIENTS',
    );
    expect(() => make({ license: ['gold'] as unknown as Record<string, unknown> })).toThrowCode(
      OappError,
      'FORMAT_BAD_ARGUMENT',
    );
    expect(() => make({ kind: 'plugin' as 'app' })).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
  });

  it('rejects an empty, over-long or control-character packageId with FORMAT_BAD_FIELD', () => {
    expect(() => make({ packageId: '' })).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
    expect(() => make({ packageId: 'x'.repeat(257) })).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
    expect(() => make({ packageId: 'a\nb' })).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
  });

  it('rejects a signText over 1 KiB or with a lone surrogate with FORMAT_BAD_ARGUMENT (S66)', () => {
    expect(() =>
      make({ signers: [{ secretKey: vendorSigner.secretKey, signText: 'x'.repeat(1025) }] }),
    ).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() =>
      make({ signers: [{ secretKey: vendorSigner.secretKey, signText: 'bad \ud800' }] }),
    ).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
  });

  it('S116: rejects keys of the wrong purpose or type for each field', () => {
    expect(() => make({ recipients: [vendorSigner.publicKey] })).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_PURPOSE',
    );
    expect(() => make({ recipients: [deployment.secretKey] })).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_TYPE',
    );
    expect(() => make({ packagerSecretKey: vendorPackager.publicKey })).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_TYPE',
    );
    expect(() => make({ signers: [{ secretKey: deployment.secretKey, signText: '' }] })).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_PURPOSE',
    );
  });

  it('embeds a license that inspection shows and signatures cover', async () => {
    const pkg = make({ license: { licensee: 'ACME', seats: 10 } });
    const info = await inspectPackage(pkg);
    expect(info.license).toEqual({ licensee: 'ACME', seats: 10 });
    expect(info.signatures[0]?.valid).toBe(true);
  });
});
