import { describe, expect, it } from 'vitest';
import { decodeBase64, encodeBase64, encodeHex, keyToHex, parseKeyTuple, sha256 } from '@org/envelope-crypto';
import { statementFor } from '../src/create.js';
import { encodeSignatures, encodeStatement, signStatement } from '../src/internal.js';
import { writerRelease } from '../src/release.js';
import {
  OappError,
  decryptBootstrap,
  encryptBootstrap,
  inspectPackage,
  openEncryptedBootstrap,
  signBootstrap,
  verifyBootstrapSignature,
  type BootstrapAdministrators,
} from '../src/index.js';
import { rogue } from '../testdata/rogue.js';
import {
  FIXED_TIME,
  customerSigner,
  deployment,
  reviewerA,
  reviewerB,
  trusted,
  vendorPackager,
} from './fixtures.js';

const BOOT = new TextEncoder().encode('[{"deploymentId":"d1","remoteConfiguration":"a.oapp"}]\n');
const admins = (threshold = 1): BootstrapAdministrators => ({
  keys: [trusted(reviewerA), trusted(reviewerB)],
  threshold,
});
const tuple = parseKeyTuple(`${keyToHex(vendorPackager.publicKey)}/${keyToHex(deployment.secretKey)}`);
const NOW = new Date('2026-11-02T00:00:00Z');

function sign(over: Partial<Parameters<typeof signBootstrap>[1]> = {}, bytes = BOOT): string {
  return signBootstrap(bytes, {
    signers: [{ secretKey: reviewerA.secretKey, signText: 'approved by A' }],
    createdAt: FIXED_TIME,
    sequence: 3,
    ...over,
  });
}

describe('signBootstrap / verifyBootstrapSignature (detached .sig of a plain bootstrap)', () => {
  it('writes the documented JSON and verifies with the administrators', () => {
    const text = sign({ expiresAt: '2027-01-01T00:00:00Z' });
    expect(text.endsWith('}\n')).toBe(true);
    const doc = JSON.parse(text) as Record<string, string>;
    expect(Object.keys(doc)).toEqual(['format', 'statement', 'signatures']);
    expect(doc['format']).toBe('oapp-bootstrap-signature/v1');
    const statement = JSON.parse(new TextDecoder().decode(decodeBase64(doc['statement']!))) as Record<
      string,
      unknown
    >;
    expect(statement).toMatchObject({
      format: 'oapp-statement/v2',
      packageId: 'bootstrap',
      sequence: 3,
      createdAt: FIXED_TIME.toISOString(),
      expiresAt: '2027-01-01T00:00:00.000Z',
      content: { mediaType: 'application/vnd.oapp.bootstrap+json', size: BOOT.length },
    });
    const v = verifyBootstrapSignature(BOOT, text, { administrators: admins(), now: NOW });
    expect(v).toMatchObject({
      sequence: 3,
      createdAt: FIXED_TIME.toISOString(),
      expiresAt: '2027-01-01T00:00:00.000Z',
    });
    expect(v.signers.additional.map((s) => s.id)).toEqual([reviewerA.id]);
  });
  it('S173 refuses a signature by another key, too few administrators, and a bootstrap changed after signing (any byte)', () => {
    const other = sign({ signers: [{ secretKey: customerSigner.secretKey, signText: 'me' }] });
    expect(() => verifyBootstrapSignature(BOOT, other, { administrators: admins(), now: NOW })).toThrowCode(
      OappError,
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    );
    expect(() => verifyBootstrapSignature(BOOT, sign(), { administrators: admins(2), now: NOW })).toThrowCode(
      OappError,
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    );
    const text = sign();
    for (let i = 0; i < BOOT.length; i++) {
      const changed = BOOT.slice();
      changed[i]! ^= 0x01;
      expect(() =>
        verifyBootstrapSignature(changed, text, { administrators: admins(), now: NOW }),
      ).toThrowCode(OappError, 'CRYPTO_CONTENT_MISMATCH');
    }
    expect(() =>
      verifyBootstrapSignature(BOOT.subarray(0, BOOT.length - 1), text, {
        administrators: admins(),
        now: NOW,
      }),
    ).toThrowCode(OappError, 'CRYPTO_CONTENT_MISMATCH');
  });
  it('S173 refuses an administrator record that does not verify with POLICY_SIGNATURE_INVALID', () => {
    const doc = JSON.parse(sign()) as Record<string, string>;
    const records = decodeBase64(doc['signatures']!);
    records[records.length - 1]! ^= 0x01;
    const forged = JSON.stringify({ ...doc, signatures: encodeBase64(records) });
    expect(() => verifyBootstrapSignature(BOOT, forged, { administrators: admins(), now: NOW })).toThrowCode(
      OappError,
      'POLICY_SIGNATURE_INVALID',
    );
  });
  it('S172 refuses an expired signature (past the skew) with POLICY_EXPIRED', () => {
    const text = sign({ expiresAt: '2026-11-01T13:00:00Z' });
    expect(() =>
      verifyBootstrapSignature(BOOT, text, {
        administrators: admins(),
        now: new Date('2026-11-01T13:05:01Z'),
      }),
    ).toThrowCode(OappError, 'POLICY_EXPIRED');
    expect(
      verifyBootstrapSignature(BOOT, text, {
        administrators: admins(),
        now: new Date('2026-11-01T13:04:59Z'),
      }).sequence,
    ).toBe(3);
  });
  it('refuses malformed signature files with FORMAT codes', () => {
    const doc = JSON.parse(sign()) as Record<string, string>;
    const cases: [string, string][] = [
      ['not json', 'FORMAT_JSON_INVALID'],
      [JSON.stringify({ ...doc, extra: 1 }), 'FORMAT_UNKNOWN_FIELD'],
      [JSON.stringify({ ...doc, format: 'oapp-bootstrap-signature/v2' }), 'FORMAT_BAD_FIELD'],
      [JSON.stringify({ ...doc, statement: 7 }), 'FORMAT_BAD_FIELD'],
      [JSON.stringify({ ...doc, statement: `${doc['statement']}\n` }), 'FORMAT_BAD_BASE64'],
      [`{"format":"oapp-bootstrap-signature/v1","format":"x"}`, 'FORMAT_JSON_DUPLICATE_KEY'],
      [JSON.stringify({ ...doc, signatures: encodeBase64(new Uint8Array(10)) }), 'FORMAT_BAD_SIGNATURES'],
    ];
    for (const [text, code] of cases)
      expect(
        () => verifyBootstrapSignature(BOOT, text, { administrators: admins(), now: NOW }),
        code,
      ).toThrowCode(OappError, code);
  });
  it('S172 accepts a signature exactly at expiresAt plus the configured skew (default 300 s), not 1 ms later', () => {
    const text = sign({ expiresAt: '2026-11-01T13:00:00Z' });
    const at = (now: string, clockSkewSeconds?: number) => () =>
      verifyBootstrapSignature(BOOT, text, {
        administrators: admins(),
        now: new Date(now),
        clockSkewSeconds,
      });
    expect(at('2026-11-01T13:05:00.000Z')().expiresAt).toBe('2026-11-01T13:00:00.000Z');
    expect(at('2026-11-01T13:05:00.001Z')).toThrowCode(OappError, 'POLICY_EXPIRED');
    expect(at('2026-11-01T13:00:00.000Z', 0)().sequence).toBe(3);
    expect(at('2026-11-01T13:00:00.001Z', 0)).toThrowCode(OappError, 'POLICY_EXPIRED');
    expect(at('2026-11-01T14:00:00.000Z', 3600)().sequence).toBe(3);
  });
  it('checks the verifier inputs (administrators, clock, skew) before the file: POLICY_INVALID even for a malformed file', () => {
    for (const o of [{ clockSkewSeconds: -1 }, { clockSkewSeconds: 86_401 }, { now: new Date(Number.NaN) }])
      expect(
        () => verifyBootstrapSignature(BOOT, 'not json', { administrators: admins(), ...o }),
        JSON.stringify(o),
      ).toThrowCode(OappError, 'POLICY_INVALID');
    expect(() => verifyBootstrapSignature(BOOT, 'not json', { administrators: admins() })).toThrowCode(
      OappError,
      'FORMAT_JSON_INVALID',
    );
  });
  it('accepts and ignores a license in the STATEMENT (SPEC.md §9.2; writers never put one)', () => {
    const st = encodeStatement(
      statementFor(
        'bootstrap',
        'bootstrap',
        BOOT.length,
        encodeHex(sha256(BOOT)),
        { terms: 'internal use' },
        writerRelease({ formatVersion: 2, sequence: 4, createdAt: FIXED_TIME }),
      ),
    );
    const record = signStatement('bootstrap', st, reviewerA.secretKey, 'approved by A', 2);
    const text = JSON.stringify({
      format: 'oapp-bootstrap-signature/v1',
      statement: encodeBase64(st),
      signatures: encodeBase64(encodeSignatures([record])),
    });
    expect(verifyBootstrapSignature(BOOT, text, { administrators: admins(), now: NOW }).sequence).toBe(4);
    const written = JSON.parse(sign()) as { statement: string };
    expect(new TextDecoder().decode(decodeBase64(written.statement))).not.toContain('license');
  });
  it('refuses bad administrators and bad signer arguments', () => {
    expect(() =>
      verifyBootstrapSignature(BOOT, sign(), { administrators: { keys: [], threshold: 1 } }),
    ).toThrowCode(OappError, 'POLICY_INVALID');
    expect(() => verifyBootstrapSignature(BOOT, sign(), { administrators: admins(0) })).toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
    expect(() => verifyBootstrapSignature(BOOT, sign(), { administrators: admins(3) })).toThrowCode(
      OappError,
      'POLICY_INVALID',
    );
    expect(() => sign({ signers: [] })).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
  });
});

describe('encrypted bootstrap with administrator signatures', () => {
  const encrypt = (signers = [{ secretKey: reviewerA.secretKey, signText: 'approved by A' }]) =>
    encryptBootstrap(BOOT, {
      packagerSecretKey: vendorPackager.secretKey,
      recipients: [deployment.publicKey],
      signers,
      createdAt: FIXED_TIME,
      sequence: 8,
    });
  it('carries the records and opens with or without administrators', async () => {
    const text = encrypt();
    const info = await inspectPackage(decodeBase64(text));
    expect(info).toMatchObject({ kind: 'bootstrap', formatVersion: 2, sequence: 8 });
    expect(info.signatures).toHaveLength(1);
    const opened = await openEncryptedBootstrap(text, tuple, { administrators: admins() });
    expect(opened.content).toEqual(BOOT);
    expect(opened.release).toMatchObject({ sequence: 8, verdict: 'first' });
    expect(opened.signers.additional.map((s) => s.id)).toEqual([reviewerA.id]);
    const unchecked = await openEncryptedBootstrap(text, tuple);
    expect(unchecked.signatureRecords).toBe(1);
    expect(unchecked.signers.ignored).toBe(1);
    expect(await decryptBootstrap(text, tuple)).toEqual(BOOT);
  });
  it('S173 with administrators refuses an unsigned bootstrap and one signed by another key', async () => {
    await expect(decryptBootstrap(encrypt([]), tuple, { administrators: admins() })).rejects.toThrowCode(
      OappError,
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    );
    await expect(
      decryptBootstrap(encrypt([{ secretKey: customerSigner.secretKey, signText: 'x' }]), tuple, {
        administrators: admins(),
      }),
    ).rejects.toThrowCode(OappError, 'POLICY_SIGNER_THRESHOLD_NOT_MET');
  });
  it('S173 a bootstrap forged with the deployment secret key opens without administrators (KCI) and is refused with them', async () => {
    const forged = encodeBase64(
      rogue({
        seed: 'kci',
        version: 2,
        kind: 'bootstrap',
        packageId: 'bootstrap',
        content: new TextEncoder().encode('[{"deploymentId":"evil"}]'),
        packager: vendorPackager,
        recipients: [deployment],
        signers: [],
        createdAt: FIXED_TIME,
        chunkSize: 65536,
        forgeWithRecipientKeys: true,
      }),
    );
    // Without signatures the box proves only "someone holding the packager's or this deployment's secret key".
    expect(new TextDecoder().decode(await decryptBootstrap(forged, tuple))).toContain('evil');
    await expect(decryptBootstrap(forged, tuple, { administrators: admins() })).rejects.toThrowCode(
      OappError,
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    );
  });
  it('S172 an expired encrypted bootstrap is refused', async () => {
    const text = encryptBootstrap(BOOT, {
      packagerSecretKey: vendorPackager.secretKey,
      recipients: [deployment.publicKey],
      createdAt: FIXED_TIME,
      expiresAt: '2026-11-01T13:00:00Z',
    });
    await expect(
      decryptBootstrap(text, tuple, { now: new Date('2026-11-01T13:06:00Z') }),
    ).rejects.toThrowCode(OappError, 'POLICY_EXPIRED');
    expect(await decryptBootstrap(text, tuple, { now: new Date('2026-11-01T13:04:00Z') })).toEqual(BOOT);
  });
});
