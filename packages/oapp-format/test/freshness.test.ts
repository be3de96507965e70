import { describe, expect, it } from 'vitest';
import { encodeHex, sha256 } from '@org/envelope-crypto';
import {
  OappError,
  checkFreshness,
  createPackage,
  createPackageStream,
  inspectPackage,
  openPackage,
  policyFromBootstrap,
  repackage,
  verifyPackage,
  writePackage,
  type CreatePackageOptions,
  type ReleaseInfo,
} from '../src/index.js';
import { rogue } from '../testdata/rogue.js';
import {
  FIXED_TIME,
  WORKFLOW,
  customerPackager,
  deployment,
  trusted,
  vendorPackager,
  vendorPolicy,
  vendorSigner,
} from './fixtures.js';
import { sectionsOf } from './package-surgery.js';

const opts = { policy: vendorPolicy(), recipientSecretKey: deployment.secretKey };
const CONTENT_SHA = encodeHex(sha256(WORKFLOW));
const OTHER_SHA = 'ab'.repeat(32);

function make(over: Partial<CreatePackageOptions> = {}, content = WORKFLOW): Uint8Array {
  return createPackage({
    packageId: 'hello-app',
    content,
    packagerSecretKey: vendorPackager.secretKey,
    recipients: [deployment.publicKey],
    signers: [{ secretKey: vendorSigner.secretKey, signText: 'ok' }],
    createdAt: FIXED_TIME,
    ...over,
  });
}

const v2 = (sequence: number, expiresAt: string | null = null): ReleaseInfo => ({
  formatVersion: 2,
  sequence,
  createdAt: '2026-11-01T12:00:00.000Z',
  expiresAt,
});
const v1: ReleaseInfo = {
  formatVersion: 1,
  sequence: null,
  createdAt: '2026-11-01T12:00:00.000Z',
  expiresAt: null,
};

describe('writers: format v2 by default', () => {
  it('writes frame version 2 with sequence and createdAt in HEADER and STATEMENT; the sequence defaults to the seconds of createdAt', async () => {
    const pkg = make();
    expect(pkg[9]).toBe(2);
    const { header, statement } = sectionsOf(pkg);
    const h = JSON.parse(new TextDecoder().decode(header.value)) as Record<string, unknown>;
    const s = JSON.parse(new TextDecoder().decode(statement.value)) as Record<string, unknown>;
    const seconds = Math.floor(FIXED_TIME.getTime() / 1000);
    expect(h).toMatchObject({ format: 'oapp/v2', sequence: seconds, createdAt: FIXED_TIME.toISOString() });
    expect(s).toMatchObject({
      format: 'oapp-statement/v2',
      sequence: seconds,
      createdAt: FIXED_TIME.toISOString(),
    });
    expect('expiresAt' in h || 'expiresAt' in s).toBe(false);
    const opened = await openPackage(pkg, opts);
    expect(opened.release).toEqual({
      formatVersion: 2,
      sequence: seconds,
      createdAt: '2026-11-01T12:00:00.000Z',
      expiresAt: null,
      verdict: 'first',
    });
  });
  it('takes a sequence and an expiry (Date or RFC 3339 text), and writes v1 on request', async () => {
    const pkg = make({ sequence: 7, expiresAt: '2026-12-01T00:00:00+01:00' });
    const info = await inspectPackage(pkg);
    expect(info).toMatchObject({ formatVersion: 2, sequence: 7, expiresAt: '2026-11-30T23:00:00.000Z' });
    const old = make({ formatVersion: 1 });
    expect(old[9]).toBe(1);
    const o = await openPackage(old, opts);
    expect(o.release).toMatchObject({ formatVersion: 1, sequence: null, verdict: 'unversioned' });
    expect((await inspectPackage(old)).format).toBe('oapp/v1');
  });
  it('the streaming writers write the same release fields (the prefix length includes them)', async () => {
    const o = {
      packageId: 'hello-app',
      packagerSecretKey: vendorPackager.secretKey,
      recipients: [deployment.publicKey],
      signers: [{ secretKey: vendorSigner.secretKey, signText: 'ok' }],
      createdAt: FIXED_TIME,
      sequence: 11,
      expiresAt: '2099-01-01T00:00:00Z',
      chunkSize: 1024,
    };
    const content = new Uint8Array(3000).fill(7);
    const out = new Uint8Array(5000);
    let length = 0;
    await writePackage(
      { ...o, content: [content], contentSize: content.length },
      {
        write(bytes, position) {
          out.set(bytes, position);
          length = Math.max(length, position + bytes.length);
        },
      },
    );
    const parts: Uint8Array[] = [];
    for await (const part of createPackageStream({ ...o, content: () => [content] })) parts.push(part);
    for (const pkg of [out.subarray(0, length), Buffer.concat(parts)]) {
      const opened = await openPackage(pkg, opts);
      expect(opened.release).toMatchObject({ sequence: 11, expiresAt: '2099-01-01T00:00:00.000Z' });
      expect(opened.content).toEqual(content);
    }
  });
  it('refuses bad release options with FORMAT_BAD_ARGUMENT', () => {
    for (const over of [
      { sequence: -1 },
      { sequence: 1.5 },
      { sequence: 2 ** 53 },
      { expiresAt: FIXED_TIME },
      { expiresAt: new Date(FIXED_TIME.getTime() - 1) },
      { expiresAt: 'tomorrow' },
      { expiresAt: '2027-02-30T00:00:00Z' },
      { formatVersion: 1 as const, sequence: 3 },
      { formatVersion: 1 as const, expiresAt: '2027-01-01T00:00:00Z' },
      { formatVersion: 3 as unknown as 2 },
    ]) {
      expect(() => make(over), JSON.stringify(over)).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    }
  });
});

describe('checkFreshness (SPEC.md §6 step 13a)', () => {
  it('gives first / newer / same / allowed-downgrade / unversioned', () => {
    expect(checkFreshness(v2(5), CONTENT_SHA, undefined).verdict).toBe('first');
    expect(
      checkFreshness(v2(6), CONTENT_SHA, undefined, { newest: { sequence: 5, contentSha256: OTHER_SHA } })
        .verdict,
    ).toBe('newer');
    expect(
      checkFreshness(v2(5), CONTENT_SHA, undefined, {
        newest: { sequence: 5, contentSha256: CONTENT_SHA.toUpperCase() },
      }).verdict,
    ).toBe('same');
    expect(
      checkFreshness(v2(3), CONTENT_SHA, 2, {
        newest: { sequence: 5, contentSha256: OTHER_SHA },
        allowSequence: 3,
      }).verdict,
    ).toBe('allowed-downgrade');
    expect(
      checkFreshness(v2(5), CONTENT_SHA, undefined, {
        newest: { sequence: 5, contentSha256: OTHER_SHA },
        allowSequence: 5,
      }).verdict,
    ).toBe('allowed-downgrade');
    expect(checkFreshness(v1, CONTENT_SHA, undefined).verdict).toBe('unversioned');
  });
  it('S169 refuses a lower sequence than the remembered newest with POLICY_ROLLBACK, and a reused one with POLICY_SEQUENCE_REUSED', () => {
    const newest = { sequence: 5, contentSha256: OTHER_SHA };
    expect(() => checkFreshness(v2(4), CONTENT_SHA, undefined, { newest })).toThrowCode(
      OappError,
      'POLICY_ROLLBACK',
    );
    expect(() => checkFreshness(v2(4), CONTENT_SHA, undefined, { newest, allowSequence: 3 })).toThrowCode(
      OappError,
      'POLICY_ROLLBACK',
    );
    expect(() => checkFreshness(v2(5), CONTENT_SHA, undefined, { newest })).toThrowCode(
      OappError,
      'POLICY_SEQUENCE_REUSED',
    );
    expect(() => checkFreshness(v1, CONTENT_SHA, undefined, { newest })).toThrowCode(
      OappError,
      'POLICY_ROLLBACK',
    );
  });
  it('S170 refuses a sequence below the floor with POLICY_BELOW_MINIMUM, also when allowSequence names it, and a v1 package under any floor', () => {
    expect(() => checkFreshness(v2(9), CONTENT_SHA, 10)).toThrowCode(OappError, 'POLICY_BELOW_MINIMUM');
    expect(() => checkFreshness(v2(9), CONTENT_SHA, 10, { allowSequence: 9 })).toThrowCode(
      OappError,
      'POLICY_BELOW_MINIMUM',
    );
    expect(() => checkFreshness(v1, CONTENT_SHA, 0)).toThrowCode(OappError, 'POLICY_BELOW_MINIMUM');
    expect(checkFreshness(v2(10), CONTENT_SHA, 10).verdict).toBe('first');
  });
  it('S172 refuses a release past expiresAt plus the skew with POLICY_EXPIRED; within the skew it is accepted', () => {
    const r = v2(1, '2026-11-02T00:00:00.000Z');
    const at = (iso: string) => new Date(iso);
    expect(checkFreshness(r, CONTENT_SHA, undefined, { now: at('2026-11-02T00:05:00.000Z') }).verdict).toBe(
      'first',
    );
    expect(() =>
      checkFreshness(r, CONTENT_SHA, undefined, { now: at('2026-11-02T00:05:00.001Z') }),
    ).toThrowCode(OappError, 'POLICY_EXPIRED');
    expect(() =>
      checkFreshness(r, CONTENT_SHA, undefined, { now: at('2026-11-02T00:00:00.001Z'), clockSkewSeconds: 0 }),
    ).toThrowCode(OappError, 'POLICY_EXPIRED');
    expect(
      checkFreshness(r, CONTENT_SHA, undefined, {
        now: at('2026-11-02T00:59:59.000Z'),
        clockSkewSeconds: 3600,
      }).verdict,
    ).toBe('first');
  });
  it('refuses malformed inputs with POLICY_INVALID', () => {
    for (const f of [
      { newest: { sequence: -1, contentSha256: CONTENT_SHA } },
      { newest: { sequence: 1, contentSha256: 'xyz' } },
      { allowSequence: 1.5 },
      { clockSkewSeconds: 86_401 },
      { now: new Date(Number.NaN) },
    ]) {
      expect(() => checkFreshness(v2(1), CONTENT_SHA, undefined, f), JSON.stringify(f)).toThrowCode(
        OappError,
        'POLICY_INVALID',
      );
    }
  });
});

describe('SPEC.md §6 step 8: the freshness inputs are checked with the policy', () => {
  const untrusted = make({ packagerSecretKey: customerPackager.secretKey, sequence: 5 });
  it('after the package parsed and before the packager is looked at (POLICY_INVALID, not POLICY_PACKAGER_NOT_TRUSTED)', async () => {
    for (const freshness of [
      { clockSkewSeconds: -1 },
      { allowSequence: -1 },
      { newest: { sequence: 1, contentSha256: 'zz'.repeat(32) } },
      { now: new Date(Number.NaN) },
    ]) {
      await expect(
        verifyPackage(untrusted, { policy: opts.policy, freshness }),
        JSON.stringify(freshness),
      ).rejects.toThrowCode(OappError, 'POLICY_INVALID');
      await expect(openPackage(untrusted, { ...opts, freshness })).rejects.toThrowCode(
        OappError,
        'POLICY_INVALID',
      );
    }
    await expect(openPackage(untrusted, opts)).rejects.toThrowCode(OappError, 'POLICY_PACKAGER_NOT_TRUSTED');
    // The package's own defect comes first (steps 1–7): a cut package is FORMAT_TRUNCATED whatever the inputs.
    await expect(
      openPackage(untrusted.subarray(0, 40), { ...opts, freshness: { clockSkewSeconds: -1 } }),
    ).rejects.toThrowCode(OappError, 'FORMAT_TRUNCATED');
  });
  it('an allowSequence below the floor is no input error: it never applies (POLICY_BELOW_MINIMUM)', async () => {
    const p = make({ sequence: 5 });
    await expect(
      openPackage(p, {
        ...opts,
        policy: { ...opts.policy, minimumSequence: 6 },
        freshness: { allowSequence: 5 },
      }),
    ).rejects.toThrowCode(OappError, 'POLICY_BELOW_MINIMUM');
    // Only the policy's own allowDowngradeTo below its own minimumSequence is invalid.
    await expect(
      openPackage(p, { ...opts, policy: { ...opts.policy, minimumSequence: 6, allowDowngradeTo: 5 } }),
    ).rejects.toThrowCode(OappError, 'POLICY_INVALID');
  });
});

describe('opening applies the freshness check after the stanza opened', () => {
  it('S169 openPackage and verifyPackage refuse an older release than the remembered newest; allowSequence lets exactly it through', async () => {
    const older = make({ sequence: 4 });
    const freshness = { newest: { sequence: 5, contentSha256: OTHER_SHA } };
    await expect(openPackage(older, { ...opts, freshness })).rejects.toThrowCode(
      OappError,
      'POLICY_ROLLBACK',
    );
    await expect(verifyPackage(older, { policy: opts.policy, freshness })).rejects.toThrowCode(
      OappError,
      'POLICY_ROLLBACK',
    );
    const allowed = await openPackage(older, { ...opts, freshness: { ...freshness, allowSequence: 4 } });
    expect(allowed.release.verdict).toBe('allowed-downgrade');
    const viaPolicy = await openPackage(older, {
      ...opts,
      policy: vendorPolicy({ allowDowngradeTo: 4 }),
      freshness,
    });
    expect(viaPolicy.release.verdict).toBe('allowed-downgrade');
    await expect(openPackage(make({ sequence: 5 }), { ...opts, freshness })).rejects.toThrowCode(
      OappError,
      'POLICY_SEQUENCE_REUSED',
    );
    expect((await openPackage(make({ sequence: 6 }), { ...opts, freshness })).release.verdict).toBe('newer');
  });
  it('S170 the policy floor refuses without any remembered state, and refuses a v1 package', async () => {
    const policy = vendorPolicy({ minimumSequence: 10 });
    await expect(openPackage(make({ sequence: 9 }), { ...opts, policy })).rejects.toThrowCode(
      OappError,
      'POLICY_BELOW_MINIMUM',
    );
    await expect(openPackage(make({ formatVersion: 1 }), { ...opts, policy })).rejects.toThrowCode(
      OappError,
      'POLICY_BELOW_MINIMUM',
    );
    expect((await openPackage(make({ sequence: 10 }), { ...opts, policy })).release.verdict).toBe('first');
  });
  it('S172 an expired package is refused against the current time by default, and the skew of the policy applies', async () => {
    const pkg = make({ expiresAt: '2026-11-02T00:00:00Z' });
    await expect(openPackage(pkg, opts)).rejects.toThrowCode(OappError, 'POLICY_EXPIRED');
    const now = new Date('2026-11-02T00:04:00Z');
    expect((await openPackage(pkg, { ...opts, freshness: { now } })).release.expiresAt).toBe(
      '2026-11-02T00:00:00.000Z',
    );
    await expect(
      openPackage(pkg, { ...opts, policy: vendorPolicy({ clockSkewSeconds: 60 }), freshness: { now } }),
    ).rejects.toThrowCode(OappError, 'POLICY_EXPIRED');
  });
  it('decides on trust before freshness: an older release of an untrusted packager is refused for the packager', async () => {
    const untrusted = createPackage({
      packageId: 'hello-app',
      content: WORKFLOW,
      packagerSecretKey: customerPackager.secretKey,
      recipients: [deployment.publicKey],
      signers: [{ secretKey: vendorSigner.secretKey, signText: 'ok' }],
      createdAt: FIXED_TIME,
      sequence: 1,
    });
    await expect(
      openPackage(untrusted, { ...opts, freshness: { newest: { sequence: 5, contentSha256: OTHER_SHA } } }),
    ).rejects.toThrowCode(OappError, 'POLICY_PACKAGER_NOT_TRUSTED');
  });
  it('S171 a HEADER whose sequence or createdAt differs from the signed STATEMENT is FORMAT_STATEMENT_MISMATCH', async () => {
    const base = {
      seed: 's171',
      version: 2 as const,
      content: WORKFLOW,
      packager: vendorPackager,
      recipients: [deployment],
      signers: [{ pair: vendorSigner, text: 'ok' }],
      createdAt: FIXED_TIME,
      chunkSize: 1024,
      sequence: 5,
    };
    for (const header of [
      (h: { sequence?: number }) => ({ ...h, sequence: 6 }),
      (h: { createdAt: string }) => ({ ...h, createdAt: '2026-11-01T12:00:01.000Z' }),
      (h: object) => ({ ...h, expiresAt: '2027-01-01T00:00:00.000Z' }),
    ]) {
      const pkg = rogue({ ...base, header: header as never });
      await expect(openPackage(pkg, opts)).rejects.toThrowCode(OappError, 'FORMAT_STATEMENT_MISMATCH');
    }
    expect((await openPackage(rogue(base), opts)).release.sequence).toBe(5);
  });
  it('inspection shows the rollback verdict when given a policy or freshness inputs, and refuses nothing', async () => {
    const pkg = make({ sequence: 4 });
    expect((await inspectPackage(pkg)).rollback).toBeNull();
    expect((await inspectPackage(pkg, { policy: vendorPolicy() })).rollback).toEqual({
      verdict: 'first',
      code: null,
      message: null,
    });
    const r = await inspectPackage(pkg, { freshness: { newest: { sequence: 5, contentSha256: OTHER_SHA } } });
    expect(r.rollback).toMatchObject({ verdict: 'refused', code: 'POLICY_ROLLBACK' });
    const floor = await inspectPackage(pkg, { policy: vendorPolicy({ minimumSequence: 9 }) });
    expect(floor.rollback).toMatchObject({ verdict: 'refused', code: 'POLICY_BELOW_MINIMUM' });
  });
});

describe('policy: release settings', () => {
  it('policyFromBootstrap reads minimumSequence, allowDowngradeTo and clockSkewSeconds, and refuses bad values', () => {
    const keys = [
      {
        id: 'p',
        purpose: 'authenticated' as const,
        type: 'public' as const,
        keyHex: encodeHex(vendorPackager.publicKey.bytes),
      },
    ];
    const packaging = { packageId: 'hello-app', packagerIdentities: ['p'] };
    const p = policyFromBootstrap(
      { ...packaging, minimumSequence: 3, allowDowngradeTo: 4, clockSkewSeconds: 0 },
      keys,
    );
    expect(p).toMatchObject({ minimumSequence: 3, allowDowngradeTo: 4, clockSkewSeconds: 0 });
    expect('minimumSequence' in policyFromBootstrap(packaging, keys)).toBe(false);
    for (const bad of [
      { minimumSequence: -1 },
      { minimumSequence: 1.5 },
      { allowDowngradeTo: 2, minimumSequence: 3 },
      { clockSkewSeconds: 86_401 },
      { clockSkewSeconds: -1 },
    ]) {
      expect(() => policyFromBootstrap({ ...packaging, ...bad }, keys), JSON.stringify(bad)).toThrowCode(
        OappError,
        'POLICY_INVALID',
      );
    }
  });
});

describe('repackage keeps the release', () => {
  it('copies sequence, createdAt and expiresAt from the STATEMENT; a v1 package stays v1', async () => {
    const policy = vendorPolicy();
    const vendor = make({ sequence: 42, expiresAt: '2099-01-01T00:00:00Z' });
    const again = await repackage(vendor, {
      open: { policy, recipientSecretKey: deployment.secretKey },
      packagerSecretKey: customerPackager.secretKey,
      recipients: [deployment.publicKey],
      createdAt: new Date('2030-01-01T00:00:00Z'),
    });
    const customerPolicy = vendorPolicy({ packagerIdentities: [trusted(customerPackager)] });
    const opened = await openPackage(again, {
      policy: customerPolicy,
      recipientSecretKey: deployment.secretKey,
    });
    expect(opened.release).toMatchObject({
      formatVersion: 2,
      sequence: 42,
      createdAt: FIXED_TIME.toISOString(),
      expiresAt: '2099-01-01T00:00:00.000Z',
    });
    const oldAgain = await repackage(make({ formatVersion: 1 }), {
      open: { policy, recipientSecretKey: deployment.secretKey },
      packagerSecretKey: customerPackager.secretKey,
      recipients: [deployment.publicKey],
    });
    expect(oldAgain[9]).toBe(1);
    expect(
      (await openPackage(oldAgain, { policy: customerPolicy, recipientSecretKey: deployment.secretKey }))
        .release.verdict,
    ).toBe('unversioned');
  });
});
