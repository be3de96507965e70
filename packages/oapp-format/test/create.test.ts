import { describe, expect, it } from 'vitest';
import {
  CryptoError,
  encodeHex,
  keyFromBytes,
  sha256,
  x25519PublicFromSecret,
  type Key,
} from '@org/envelope-crypto';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';
import {
  OappError,
  createPackage,
  createPackageStream,
  encryptBootstrap,
  inspectPackage,
  openPackage,
  repackage,
  writePackage,
} from '../src/index.js';
import { checkRecipients } from '../src/create.js';
import { keyHint } from '../src/fingerprint.js';
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

describe('writers refuse two recipients with one key hint (SPEC.md §4.4, §5.2 step 6)', () => {
  /**
   * Two keys whose hints agree in their first `bytes` bytes, by a seeded search (fixed labels, so always the same
   * pair). No two keys with equal 8-byte hints are known, so the writer's check is exercised with a shortened
   * hint; the full-length check is the same code with `keyHint`.
   */
  function collidingPair(bytes: number): [Key, Key] {
    const seen = new Map<string, Key>();
    for (let i = 0; ; i++) {
      const sk = sha256(new TextEncoder().encode(`hint search ${i}`));
      const pk = keyFromBytes('authenticated', 'public', x25519PublicFromSecret(sk), `search-${i}`);
      const prefix = encodeHex(keyHint(pk.bytes).subarray(0, bytes));
      const other = seen.get(prefix);
      if (other !== undefined) return [other, pk];
      seen.set(prefix, pk);
    }
  }

  it('refuses distinct keys whose (shortened) hints are equal with FORMAT_BAD_ARGUMENT naming both', () => {
    const [a, b] = collidingPair(2);
    expect(a.bytes).not.toEqual(b.bytes);
    const short = (pk: Uint8Array) => keyHint(pk).subarray(0, 2);
    const err = thrownBy(() => checkRecipients([deployment.publicKey, a, b], short)) as OappError;
    expect(err).toBeInstanceOf(OappError);
    expect(err.code).toBe('FORMAT_BAD_ARGUMENT');
    expect(err.message).toContain('the same key hint');
    expect(err.details).toEqual({ recipient: 2, sameHintAs: 1, fingerprint: encodeHex(short(a.bytes)) });
    expect(detailsShapeProblem(err)).toBeUndefined();
    // With the real 8-byte hint the same two keys are fine.
    expect(() => checkRecipients([deployment.publicKey, a, b])).not.toThrow();
  });

  it('refuses the same key twice in every writer: createPackage, encryptBootstrap, repackage, the streaming writers', async () => {
    const twice = [deployment.publicKey, otherDeployment.publicKey, deployment.publicKey];
    expect(() => make({ recipients: twice })).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() =>
      encryptBootstrap(new Uint8Array(2), { packagerSecretKey: vendorPackager.secretKey, recipients: twice }),
    ).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    await expect(
      repackage(make(), {
        open: { policy: vendorPolicy(), recipientSecretKey: deployment.secretKey },
        packagerSecretKey: vendorPackager.secretKey,
        recipients: twice,
      }),
    ).rejects.toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    const stream = {
      packageId: 'hello-app',
      packagerSecretKey: vendorPackager.secretKey,
      recipients: twice,
      contentSize: WORKFLOW.length,
    };
    expect(() => createPackageStream({ ...stream, content: () => [WORKFLOW] })).toThrowCode(
      OappError,
      'FORMAT_BAD_ARGUMENT',
    );
    await expect(
      writePackage({ ...stream, content: [WORKFLOW] }, { write: () => undefined }),
    ).rejects.toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
  });
});
