import { describe, expect, it } from 'vitest';
import { decodeBase64, encodeBase64, keyToHex, parseKeyTuple } from '@org/envelope-crypto';
import {
  OappError,
  createPackage,
  decryptBootstrap,
  encryptBootstrap,
  inspectPackage,
  isEncryptedBootstrapText,
  openPackage,
} from '../src/index.js';
import {
  WORKFLOW,
  deployment,
  otherDeployment,
  vendorPackager,
  vendorPolicy,
  vendorSigner,
} from './fixtures.js';

const BOOT = new TextEncoder().encode('[{"deploymentId":"d1","remoteConfiguration":"a.oapp"}]');
const tuple = (sender = vendorPackager, me = deployment) =>
  parseKeyTuple(`${keyToHex(sender.publicKey)}/${keyToHex(me.secretKey)}`);

function encrypt(): string {
  return encryptBootstrap(BOOT, {
    packagerSecretKey: vendorPackager.secretKey,
    recipients: [deployment.publicKey, otherDeployment.publicKey],
  });
}

describe('encryptBootstrap / decryptBootstrap', () => {
  it('round-trips for each recipient and tolerates a trailing newline', async () => {
    const text = encrypt();
    expect(isEncryptedBootstrapText(text)).toBe(true);
    expect(await decryptBootstrap(text + '\n', tuple())).toEqual(BOOT);
    expect(await decryptBootstrap(text, tuple(vendorPackager, otherDeployment))).toEqual(BOOT);
  });
  it('is a bootstrap-kind package with no signatures', async () => {
    const info = await inspectPackage(decodeBase64(encrypt()));
    expect(info).toMatchObject({ kind: 'bootstrap', packageId: 'bootstrap', signatures: [] });
  });
  it('S46: the wrong sender or the wrong secret key → POLICY_PACKAGER_NOT_TRUSTED / CRYPTO_NO_MATCHING_RECIPIENT', async () => {
    await expect(decryptBootstrap(encrypt(), tuple(otherDeployment, deployment))).rejects.toThrowCode(
      OappError,
      'POLICY_PACKAGER_NOT_TRUSTED',
    );
    await expect(decryptBootstrap(encrypt(), tuple(vendorPackager, vendorPackager))).rejects.toThrowCode(
      OappError,
      'CRYPTO_NO_MATCHING_RECIPIENT',
    );
  });
  it('S61/S62: rejects inner whitespace, junk and non-canonical Base64 with FORMAT_BAD_BASE64', async () => {
    const text = encrypt();
    const canonicalTail = encodeBase64(Uint8Array.of(0x61, 0x62)); // "YWI="
    for (const bad of [
      text.slice(0, 20) + ' ' + text.slice(20),
      text.slice(0, 20) + '\n' + text.slice(20),
      text.slice(0, 20) + '!!!!' + text.slice(20),
      text.replace(/[+/]/, '-'),
      'YWK=',
      canonicalTail.slice(0, 3),
    ]) {
      await expect(decryptBootstrap(bad, tuple())).rejects.toThrowCode(OappError, 'FORMAT_BAD_BASE64');
    }
  });
  it('S60: an app package given as a bootstrap, and a bootstrap given as an app, → FORMAT_WRONG_KIND', async () => {
    const app = createPackage({
      packageId: 'bootstrap',
      content: WORKFLOW,
      packagerSecretKey: vendorPackager.secretKey,
      recipients: [deployment.publicKey],
      signers: [{ secretKey: vendorSigner.secretKey, signText: '' }],
    });
    await expect(decryptBootstrap(encodeBase64(app), tuple())).rejects.toThrowCode(
      OappError,
      'FORMAT_WRONG_KIND',
    );
    await expect(
      openPackage(decodeBase64(encrypt()), {
        policy: vendorPolicy({ packageId: 'bootstrap' }),
        recipientSecretKey: deployment.secretKey,
      }),
    ).rejects.toThrowCode(OappError, 'FORMAT_WRONG_KIND');
  });
  it('refuses a bootstrap over 4 MiB', () => {
    expect(() =>
      encryptBootstrap(new Uint8Array(4 * 1024 * 1024 + 1), {
        packagerSecretKey: vendorPackager.secretKey,
        recipients: [deployment.publicKey],
      }),
    ).toThrowCode(OappError, 'FORMAT_PAYLOAD_TOO_LARGE');
  });
  it('isEncryptedBootstrapText is false for plain JSON, a path and Base64 of JSON', () => {
    for (const t of ['[{"a":1}]', '/etc/agent/bootstrap.json', encodeBase64(BOOT), '', '!'.repeat(20)])
      expect(isEncryptedBootstrapText(t)).toBe(false);
  });
});
