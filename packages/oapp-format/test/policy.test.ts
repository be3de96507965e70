import { describe, expect, it } from 'vitest';
import { keyToHex } from '@org/envelope-crypto';
import {
  OappError,
  createPackage,
  openPackage,
  policyFromBootstrap,
  verifyPackage,
  validatePolicy,
  type DeploymentPolicy,
  type PackageSigner,
} from '../src/index.js';
import { flipByte, sectionsOf } from './package-surgery.js';
import {
  FIXED_TIME,
  WORKFLOW,
  deployment,
  reviewerA,
  reviewerB,
  reviewerC,
  trusted,
  vendorPackager,
  vendorPolicy,
  vendorSigner,
} from './fixtures.js';

const sign = (p: { secretKey: PackageSigner['secretKey'] }, text = 'ok'): PackageSigner => ({
  secretKey: p.secretKey,
  signText: text,
});

function pkg(signers: PackageSigner[], packageId = 'hello-app'): Uint8Array {
  return createPackage({
    packageId,
    content: WORKFLOW,
    packagerSecretKey: vendorPackager.secretKey,
    recipients: [deployment.publicKey],
    signers,
    createdAt: FIXED_TIME,
  });
}

const threshold = (k: number, overrides: Partial<DeploymentPolicy> = {}): DeploymentPolicy =>
  vendorPolicy({
    additionalSigners: [trusted(reviewerA), trusted(reviewerB), trusted(reviewerC)],
    requiredAdditionalSignerCount: k,
    ...overrides,
  });

async function verify(bytes: Uint8Array, policy: DeploymentPolicy) {
  return verifyPackage(bytes, { policy });
}

describe('checkSignatures through verifyPackage', () => {
  it('S86: no records while a signer is required → POLICY_REQUIRED_SIGNER_MISSING naming the fingerprint', async () => {
    const err = await verify(pkg([]), vendorPolicy()).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'POLICY_REQUIRED_SIGNER_MISSING',
      details: { signerId: 'vendor-signer' },
    });
    expect((err as OappError).message).toMatch(/vendor-signer.*\([0-9a-f]{16}\)/);
  });

  it('S88: K = 2 of [A, B, C] with only A → POLICY_SIGNER_THRESHOLD_NOT_MET "1 of 2"', async () => {
    const err = await verify(pkg([sign(vendorSigner), sign(reviewerA)]), threshold(2)).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: 'POLICY_SIGNER_THRESHOLD_NOT_MET',
      details: { found: 1, required: 2 },
    });
    expect((err as Error).message).toContain('1 of 2');
  });

  it('passes K = 2 with A and B, and K = 0 needs no additional signer (S92)', async () => {
    await expect(
      verify(pkg([sign(vendorSigner), sign(reviewerA), sign(reviewerB)]), threshold(2)),
    ).resolves.toBeDefined();
    await expect(verify(pkg([sign(vendorSigner)]), threshold(0))).resolves.toBeDefined();
  });

  it('S90: the same signer twice counts once', async () => {
    await expect(
      verify(pkg([sign(vendorSigner), sign(reviewerA), sign(reviewerA, 'again')]), threshold(2)),
    ).rejects.toThrowCode(OappError, 'POLICY_SIGNER_THRESHOLD_NOT_MET');
  });

  it('S91: a required signer does not count toward K', async () => {
    const p = vendorPolicy({
      additionalSigners: [trusted(reviewerA), trusted(reviewerB)],
      requiredAdditionalSignerCount: 1,
    });
    await expect(verify(pkg([sign(vendorSigner)]), p)).rejects.toThrowCode(
      OappError,
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    );
  });

  it('ignores records of keys the policy does not name', async () => {
    const v = await verify(pkg([sign(vendorSigner), sign(reviewerC)]), vendorPolicy());
    expect(v.signers.ignored).toBe(1);
  });

  it('S93: a flipped signature of a named key that K does not need rejects the whole package', async () => {
    const bytes = pkg([sign(vendorSigner), sign(reviewerA, 'A')]);
    // Second record starts after the first (98 + len("ok")); its signature follows key, length and "A".
    const tampered = flipByte(bytes, sectionsOf(bytes).signatures.valueOffset + 100 + 32 + 2 + 1 + 10);
    await expect(verify(tampered, threshold(0))).rejects.toThrowCode(OappError, 'POLICY_SIGNATURE_INVALID');
  });

  it('S101 / S70: another packageId, an NFD form or another letter case → POLICY_PACKAGE_ID_MISMATCH before decryption', async () => {
    await expect(verify(pkg([sign(vendorSigner)], 'app-b'), vendorPolicy())).rejects.toThrowCode(
      OappError,
      'POLICY_PACKAGE_ID_MISMATCH',
    );
    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    await expect(
      verify(pkg([sign(vendorSigner)], nfd), vendorPolicy({ packageId: nfc })),
    ).rejects.toThrowCode(OappError, 'POLICY_PACKAGE_ID_MISMATCH');
    await expect(verify(pkg([sign(vendorSigner)], 'Hello-App'), vendorPolicy())).rejects.toThrowCode(
      OappError,
      'POLICY_PACKAGE_ID_MISMATCH',
    );
  });

  it('issue 27: POLICY_PACKAGE_ID_MISMATCH names the id found and the id expected, JSON-quoted', async () => {
    const err = await verify(pkg([sign(vendorSigner)], 'app-b'), vendorPolicy()).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'POLICY_PACKAGE_ID_MISMATCH',
      message:
        'the package id "app-b" does not equal the deployment\'s packaging.packageId "hello-app" (compared byte for byte)',
      details: { expected: 'hello-app', found: 'app-b' },
    });
  });

  it('issue 27: the ids in POLICY_PACKAGE_ID_MISMATCH are escaped (NFD, bidi override, control) and cut to 64 characters', async () => {
    const nfd = await verify(
      pkg([sign(vendorSigner)], 'cafe\u0301'),
      vendorPolicy({ packageId: 'caf\u00e9' }),
    ).catch((e: unknown) => e);
    expect((nfd as Error).message).toContain('id "cafe\\u0301" does not equal');
    expect((nfd as Error).message).toContain('packageId "caf\\u00e9" (');
    const bidi = await verify(
      pkg([sign(vendorSigner)], 'app\u202egnp.exe'),
      vendorPolicy({ packageId: 'a\u0007"b' }),
    ).catch((e: unknown) => e);
    expect((bidi as Error).message).toContain('"app\\u202egnp.exe"');
    expect((bidi as Error).message).toContain('"a\\u0007\\"b"');
    expect((bidi as Error).message).toMatch(/^[\x20-\x7e]+$/);
    const long = await verify(pkg([sign(vendorSigner)], 'x'.repeat(256)), vendorPolicy()).catch(
      (e: unknown) => e,
    );
    expect(long).toMatchObject({ code: 'POLICY_PACKAGE_ID_MISMATCH' });
    expect((long as Error).message).toContain(`"${'x'.repeat(64)}"... (256 characters) does not equal`);
    expect((long as Error).message).not.toContain('x'.repeat(65));
  });

  it('S102: an older, validly signed package with the same packageId still verifies (v1 has no rollback protection)', async () => {
    const older = createPackage({
      packageId: 'hello-app',
      content: new TextEncoder().encode('{"workflows":[{"old":true}]}'),
      packagerSecretKey: vendorPackager.secretKey,
      recipients: [deployment.publicKey],
      signers: [sign(vendorSigner)],
      createdAt: new Date('2020-01-01T00:00:00.000Z'),
    });
    const opened = await openPackage(older, {
      policy: vendorPolicy(),
      recipientSecretKey: deployment.secretKey,
    });
    expect(opened.parsed.header.createdAt).toBe('2020-01-01T00:00:00.000Z');
  });
});

describe('validatePolicy', () => {
  it('rejects a key listed twice in one list, which would otherwise count twice toward K', () => {
    expect(() =>
      validatePolicy(
        vendorPolicy({
          additionalSigners: [trusted(reviewerA), trusted(reviewerA)],
          requiredAdditionalSignerCount: 2,
        }),
      ),
    ).toThrowCode(OappError, 'POLICY_INVALID');
    expect(() =>
      validatePolicy(
        vendorPolicy({ packagerIdentities: [trusted(vendorPackager), trusted(vendorPackager)] }),
      ),
    ).toThrowCode(OappError, 'POLICY_INVALID');
  });
  it('S91: rejects a key in both requiredSigners and additionalSigners', () => {
    expect(() => validatePolicy(vendorPolicy({ additionalSigners: [trusted(vendorSigner)] }))).toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
  });
  it('S92: rejects K = 3 with two additional signers, K = -1, K = 1.5 and K = "2"', () => {
    const two = [trusted(reviewerA), trusted(reviewerB)];
    for (const k of [3, -1, 1.5, '2' as unknown as number]) {
      expect(
        () => validatePolicy(vendorPolicy({ additionalSigners: two, requiredAdditionalSignerCount: k })),
        String(k),
      ).toThrowCode(OappError, 'POLICY_INVALID');
    }
  });
  it("S94, S176: rejects all-zero and small-order keys registered as signers with the key's own code, CRYPTO_WEAK_KEY (SPEC.md §2)", () => {
    for (const bad of [new Uint8Array(32), Uint8Array.from([1, ...new Array<number>(31).fill(0)])]) {
      expect(() =>
        validatePolicy(vendorPolicy({ requiredSigners: [{ id: 'weak', publicKey: bad }] })),
      ).toThrowCode(OappError, 'CRYPTO_WEAK_KEY');
    }
  });
});

describe('validatePolicy (packageId)', () => {
  it('rejects an empty packageId', () => {
    expect(() => validatePolicy(vendorPolicy({ packageId: '' }))).toThrowCode(OappError, 'POLICY_INVALID');
  });
});

describe('policyFromBootstrap', () => {
  it('defaults the lists to empty and K to 0', () => {
    expect(policyFromBootstrap({ packageId: 'x' }, [])).toEqual({
      packageId: 'x',
      packagerIdentities: [],
      requiredSigners: [],
      additionalSigners: [],
      requiredAdditionalSignerCount: 0,
    });
  });
  const keys = [
    {
      id: 'packager',
      purpose: 'authenticated',
      type: 'public',
      keyHex: keyToHex(vendorPackager.publicKey).toUpperCase(),
    },
    { id: 'me', purpose: 'authenticated', type: 'secret', keyHex: keyToHex(deployment.secretKey) },
    { id: 'vendor', purpose: 'sign', type: 'public', keyHex: keyToHex(vendorSigner.publicKey) },
    { id: 'a', purpose: 'sign', type: 'public', keyHex: keyToHex(reviewerA.publicKey) },
  ];
  it('builds a policy from a packaging block, accepting signers as strings or {id} and hex in either case', async () => {
    const policy = policyFromBootstrap(
      {
        packageId: 'hello-app',
        packagerIdentities: ['packager'],
        requiredSigners: [{ id: 'vendor' }],
        additionalSigners: ['a'],
        requiredAdditionalSignerCount: 1,
      },
      keys,
    );
    await expect(verify(pkg([sign(vendorSigner), sign(reviewerA)]), policy)).resolves.toBeDefined();
  });
  it('rejects an unknown key id, a key of the wrong purpose and duplicate ids with POLICY_INVALID', () => {
    expect(() => policyFromBootstrap({ packageId: 'x', packagerIdentities: ['nope'] }, keys)).toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
    expect(() => policyFromBootstrap({ packageId: 'x', packagerIdentities: ['vendor'] }, keys)).toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
    expect(() => policyFromBootstrap({ packageId: 'x', requiredSigners: ['me'] }, keys)).toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
    expect(() => policyFromBootstrap({ packageId: 'x' }, [...keys, keys[0]!])).toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
  });
});

describe('S178 key ids in policy messages are in the display form (SPEC.md §6.4)', () => {
  it('S178 a required signer id with bidi and zero-width characters is shown escaped', async () => {
    const id = 'vendor\u202e-signer\u200b';
    const policy = vendorPolicy({ requiredSigners: [{ id, publicKey: vendorSigner.publicKey.bytes }] });
    const err = (await verifyPackage(pkg([]), { policy }).then(
      () => undefined,
      (e: unknown) => e,
    )) as OappError;
    expect(err.code).toBe('POLICY_REQUIRED_SIGNER_MISSING');
    expect(err.message).toContain('required signer "vendor\\u{202E}-signer\\u{200B}"');
    expect(err.message).not.toMatch(/[\u202e\u200b]/u);
    expect(err.details).toMatchObject({ signerId: id });
  });
});
