import { describe, expect, it } from 'vitest';
import {
  createPackage,
  inspectPackage,
  isOappError,
  openPackage,
  repackage,
  type DeploymentPolicy,
} from '../src/index.js';
import { STANZA_BYTES } from '../src/internal.js';
import {
  FIXED_TIME,
  WORKFLOW,
  boxPair,
  customerDistribution,
  customerPackager,
  customerSigner,
  trusted,
  vendorPackager,
  vendorSigner,
  type Pair,
} from './fixtures.js';
import { flipByte, sectionsOf } from './package-surgery.js';
import { base } from '../testdata/negative-cases.js';
import { rogue } from '../testdata/rogue.js';

// docs/security-requirements.md S99: the vendor packages for the customer's distribution key; the customer
// inspects it without secret keys, verifies the vendor, adds its endorsement and repackages for
// three deployments under its own packager identity; each deployment requires both signers and
// trusts only the customer's packager identity.
const deployments = [boxPair('customer-dep-1'), boxPair('customer-dep-2'), boxPair('customer-dep-3')];

function vendorPackage(): Uint8Array {
  return createPackage({
    packageId: 'invoice-uploader',
    content: WORKFLOW,
    packagerSecretKey: vendorPackager.secretKey,
    recipients: [customerDistribution.publicKey],
    signers: [{ secretKey: vendorSigner.secretKey, signText: 'vendor release 1.4.0' }],
    createdAt: FIXED_TIME,
  });
}

const customerIntake: DeploymentPolicy = {
  packageId: 'invoice-uploader',
  packagerIdentities: [trusted(vendorPackager)],
  requiredSigners: [trusted(vendorSigner)],
  additionalSigners: [],
  requiredAdditionalSignerCount: 0,
};

const deploymentPolicy: DeploymentPolicy = {
  packageId: 'invoice-uploader',
  packagerIdentities: [trusted(customerPackager)],
  requiredSigners: [trusted(vendorSigner), trusted(customerSigner)],
  additionalSigners: [],
  requiredAdditionalSignerCount: 0,
};

async function customerPackage(vendor: Uint8Array): Promise<Uint8Array> {
  return repackage(vendor, {
    open: { policy: customerIntake, recipientSecretKey: customerDistribution.secretKey },
    packagerSecretKey: customerPackager.secretKey,
    recipients: deployments.map((d) => d.publicKey),
    signers: [{ secretKey: customerSigner.secretKey, signText: 'approved for production by customer' }],
    createdAt: new Date('2026-11-02T09:00:00.000Z'),
  });
}

async function runs(pkg: Uint8Array, dep: Pair): Promise<boolean> {
  try {
    const opened = await openPackage(pkg, { policy: deploymentPolicy, recipientSecretKey: dep.secretKey });
    return Buffer.from(opened.content).equals(Buffer.from(WORKFLOW));
  } catch {
    return false;
  }
}

describe('repackage (S99 vendor → customer → three deployments)', () => {
  it('lets the customer inspect the vendor package without secret keys and see a valid vendor signature', async () => {
    const info = await inspectPackage(vendorPackage());
    expect(info.signatures).toHaveLength(1);
    expect(info.signatures[0]).toMatchObject({ signText: 'vendor release 1.4.0', valid: true });
    expect(info.packager.publicKeyHex).toBe(Buffer.from(vendorPackager.publicKey.bytes).toString('hex'));
  });

  it('runs the repackaged app in each of the three deployments with both signatures verified', async () => {
    const pkg = await customerPackage(vendorPackage());
    for (const dep of deployments) {
      const opened = await openPackage(pkg, { policy: deploymentPolicy, recipientSecretKey: dep.secretKey });
      expect(opened.content).toEqual(WORKFLOW);
      expect(opened.signers.required.map((s) => s.id)).toEqual(['vendor-signer', 'customer-signer']);
    }
    const info = await inspectPackage(pkg);
    expect(info.envelope).toHaveLength(1);
    expect(info.envelope[0]?.packager).toBe(Buffer.from(vendorPackager.publicKey.bytes).toString('hex'));
    expect(info.signatures.map((s) => s.valid)).toEqual([true, true]);
  });

  it('refuses to grow the envelope chain beyond 16 links', async () => {
    const link = { packager: '01'.repeat(32), headerSha256: '02'.repeat(32) };
    const long = rogue({
      ...base('long-chain'),
      packageId: 'invoice-uploader',
      recipients: [customerDistribution],
      header: (h) => ({ ...h, envelope: { chain: Array.from({ length: 16 }, () => link) } }),
    });
    await expect(
      repackage(long, {
        open: {
          policy: { ...customerIntake, requiredSigners: [] },
          recipientSecretKey: customerDistribution.secretKey,
        },
        packagerSecretKey: customerPackager.secretKey,
        recipients: [deployments[0]!.publicKey],
      }),
    ).rejects.toThrowCode('OappError', 'FORMAT_BAD_ARGUMENT');
  });

  it('rejects an invalid chunk size with FORMAT_BAD_ARGUMENT, never a stray RangeError', async () => {
    const vendor = vendorPackage();
    for (const chunkSize of [0, 100, 1000]) {
      await expect(
        repackage(vendor, {
          open: { policy: customerIntake, recipientSecretKey: customerDistribution.secretKey },
          packagerSecretKey: customerPackager.secretKey,
          recipients: [deployments[0]!.publicKey],
          chunkSize,
        }),
        String(chunkSize),
      ).rejects.toThrowCode('OappError', 'FORMAT_BAD_ARGUMENT');
    }
  });

  it('S98: refuses the customer package where the deployment trusts only the vendor packager', async () => {
    const pkg = await customerPackage(vendorPackage());
    await expect(
      openPackage(pkg, {
        policy: { ...deploymentPolicy, packagerIdentities: [trusted(vendorPackager)] },
        recipientSecretKey: deployments[0]!.secretKey,
      }),
    ).rejects.toThrowCode('OappError', 'POLICY_PACKAGER_NOT_TRUSTED');
  });

  it('detects a flip of any single byte of the vendor package at the customer', async () => {
    const vendor = vendorPackage();
    for (let i = 0; i < vendor.length; i++) {
      await expect(
        openPackage(flipByte(vendor, i), {
          policy: customerIntake,
          recipientSecretKey: customerDistribution.secretKey,
        }),
        `byte ${i}`,
      ).rejects.toSatisfy(isOappError);
    }
  }, 60_000);

  it('detects a flip of any byte of the customer package in every deployment that reads it', async () => {
    const pkg = await customerPackage(vendorPackage());
    // Each deployment authenticates everything except the other deployments' stanzas (SPEC.md §15):
    // a flip there is caught by the deployment that owns the stanza and changes nothing for the rest.
    const stanzas = sectionsOf(pkg).recipients.valueOffset;
    for (let i = 0; i < pkg.length; i++) {
      const tampered = flipByte(pkg, i);
      const results = await Promise.all(deployments.map((d) => runs(tampered, d)));
      const inStanza =
        i >= stanzas && i < stanzas + 3 * STANZA_BYTES ? Math.floor((i - stanzas) / STANZA_BYTES) : -1;
      // Outside the stanzas every deployment rejects; inside stanza k only deployment k reads it.
      expect(results, `byte ${i}`).toEqual(deployments.map((_, k) => inStanza !== -1 && k !== inStanza));
    }
  }, 120_000);
});
