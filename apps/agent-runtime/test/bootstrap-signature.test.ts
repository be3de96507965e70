import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeBase64, encodeBase64, generateKeyPair, type KeyPair } from '@org/envelope-crypto';
import { encryptBootstrap, signBootstrap } from '@org/oapp-format';
import { describe, expect, it } from 'vitest';
import { loadBootstrap, type BootstrapTrustOptions } from '../src/startup/bootstrap-source.js';
import {
  administratorsOf,
  agentKeyOf,
  bootstrapFile,
  bootstrapSigner as signer,
  failure,
} from './bootstrap-signing.js';
import { forgeWithAgentKey, makeKeys, makeRecord, tempDir } from './fixtures.js';

const keys = makeKeys();
const dir = tempDir();
const json = JSON.stringify([makeRecord(keys, 'app.oapp')], null, 2);
const bytes = new TextEncoder().encode(json);
const agentKey = agentKeyOf(keys);
const adminA = generateKeyPair('sign');
const adminB = generateKeyPair('sign');
const stranger = generateKeyPair('sign');
const admins = (threshold = 1, ...pairs: KeyPair[]) =>
  administratorsOf(pairs.length > 0 ? pairs : [adminA, adminB], threshold);
const withAdmins: BootstrapTrustOptions = { administrators: admins() };

/** A plain bootstrap file with, optionally, its `.sig` beside it. */
const plainFile = (content: Uint8Array | string, sig?: string): string => bootstrapFile(dir, content, sig);

function encrypted(
  signers: KeyPair[],
  recipient: KeyPair = keys.agent,
  o: { expiresAt?: Date } = {},
): string {
  return encryptBootstrap(bytes, {
    packagerSecretKey: keys.packager.secretKey,
    recipients: [recipient.publicKey!],
    signers: signers.map(signer),
    ...(o.expiresAt === undefined ? {} : { createdAt: new Date(o.expiresAt.getTime() - 3_600_000), ...o }),
  });
}

describe('S173: an agent given administrator keys, plain bootstraps', () => {
  it('S173 refuses a plain bootstrap file without a signature file with AGENT_BOOTSTRAP_UNSIGNED, naming it', async () => {
    const path = plainFile(json);
    const e = await failure(loadBootstrap(path, undefined, undefined, withAdmins));
    expect(e.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    expect(e.message).toContain(`${path}.sig`);
  });

  it('S173 refuses an unsigned bootstrap before anything else is read from it (not JSON, a missing variable)', async () => {
    for (const text of ['{ not json', JSON.stringify([{ deploymentId: '${NOT_SET}' }])]) {
      const e = await failure(loadBootstrap(plainFile(text), undefined, undefined, withAdmins));
      expect(e.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    }
    // Text in AGENT_BOOTSTRAP has no signature file unless AGENT_BOOTSTRAP_SIGNATURE names one.
    for (const text of [json, Buffer.from(json).toString('base64')]) {
      const e = await failure(loadBootstrap(text, undefined, undefined, withAdmins));
      expect(e.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
      expect(e.message).toContain('AGENT_BOOTSTRAP_SIGNATURE');
    }
  });

  it('S173 refuses a bootstrap signed by another key with POLICY_SIGNER_THRESHOLD_NOT_MET', async () => {
    const path = plainFile(json, signBootstrap(bytes, { signers: [signer(stranger)] }));
    const e = await failure(loadBootstrap(path, undefined, undefined, withAdmins));
    expect(e.code).toBe('POLICY_SIGNER_THRESHOLD_NOT_MET');
    expect(e.message).toContain('.sig');
  });

  it('S173 refuses a bootstrap with any byte changed after signing with CRYPTO_CONTENT_MISMATCH', async () => {
    const sig = signBootstrap(bytes, { signers: [signer(adminA)] });
    for (let i = 0; i < bytes.length; i++) {
      const changed = bytes.slice();
      changed[i]! ^= 0x01;
      const e = await failure(loadBootstrap(plainFile(changed, sig), undefined, undefined, withAdmins));
      expect(e.code).toBe('CRYPTO_CONTENT_MISMATCH');
    }
  }, 60_000);

  it('S173 refuses a signature file with any byte changed (FORMAT_* or POLICY_*), never accepting it', async () => {
    const sig = new TextEncoder().encode(signBootstrap(bytes, { signers: [signer(adminA)] }));
    const path = plainFile(json);
    for (let i = 0; i < sig.length; i++) {
      const changed = sig.slice();
      changed[i]! ^= 0x01;
      writeFileSync(`${path}.sig`, changed);
      const e = await failure(loadBootstrap(path, undefined, undefined, withAdmins));
      expect(e.code).toMatch(/^(FORMAT_|POLICY_|CRYPTO_)/);
    }
  }, 60_000);

  it('S173 starts from a correctly signed plain bootstrap: a .sig beside the file, or AGENT_BOOTSTRAP_SIGNATURE', async () => {
    const sig = signBootstrap(bytes, { signers: [signer(adminB)], sequence: 42 });
    const loaded = await loadBootstrap(plainFile(json, sig), undefined, undefined, withAdmins);
    expect(loaded.bootstrap[0]?.deploymentId).toBe('dep-1');
    expect(loaded.trust).toMatchObject({
      signature: 'verified',
      sequence: 42,
      signers: ['AGENT_BOOTSTRAP_ADMIN_KEYS[1]'],
    });
    const sigPath = join(dir, 'elsewhere.sig');
    writeFileSync(sigPath, sig);
    const b64 = await loadBootstrap(Buffer.from(bytes).toString('base64'), undefined, undefined, {
      ...withAdmins,
      signaturePath: sigPath,
    });
    expect(b64.trust.signature).toBe('verified');
    const text = await loadBootstrap(json, undefined, undefined, { ...withAdmins, signaturePath: sigPath });
    expect(text.trust.signature).toBe('verified');
  });

  it('S173 counts distinct administrators against AGENT_BOOTSTRAP_ADMIN_THRESHOLD', async () => {
    const two = { administrators: admins(2) };
    const one = plainFile(json, signBootstrap(bytes, { signers: [signer(adminA), signer(adminA)] }));
    expect((await failure(loadBootstrap(one, undefined, undefined, two))).code).toBe(
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    );
    const both = plainFile(json, signBootstrap(bytes, { signers: [signer(adminA), signer(adminB)] }));
    expect((await loadBootstrap(both, undefined, undefined, two)).trust.signers).toHaveLength(2);
  });

  it('S173 refuses a signature past its expiresAt plus 300 s with POLICY_EXPIRED', async () => {
    const now = Date.now();
    const sig = signBootstrap(bytes, {
      signers: [signer(adminA)],
      createdAt: new Date(now - 3_600_000),
      expiresAt: new Date(now - 600_000),
    });
    const e = await failure(loadBootstrap(plainFile(json, sig), undefined, undefined, withAdmins));
    expect(e.code).toBe('POLICY_EXPIRED');
  });
});

describe('S173: an agent given administrator keys, encrypted bootstraps', () => {
  it('S173 refuses an encrypted bootstrap without signature records (text and file) with AGENT_BOOTSTRAP_UNSIGNED', async () => {
    const text = encrypted([]);
    expect((await failure(loadBootstrap(text, agentKey, undefined, withAdmins))).code).toBe(
      'AGENT_BOOTSTRAP_UNSIGNED',
    );
    const file = join(dir, 'bootstrap.enc');
    writeFileSync(file, `${text}\n`);
    expect((await failure(loadBootstrap(file, agentKey, undefined, withAdmins))).code).toBe(
      'AGENT_BOOTSTRAP_UNSIGNED',
    );
  });

  it('S173 refuses one forged with the agent own secret key (crypto_box KCI), which opens without administrator keys', async () => {
    const attack = [makeRecord(keys, 'evil.oapp', { deploymentId: 'forged' })];
    const forged = forgeWithAgentKey(keys, attack);
    // The forgery is real: without administrator keys the agent opens it as the packager's.
    const opened = await loadBootstrap(forged, agentKey);
    expect(opened.bootstrap[0]?.deploymentId).toBe('forged');
    expect(opened.trust.signature).toBe('unsigned');
    expect((await failure(loadBootstrap(forged, agentKey, undefined, withAdmins))).code).toBe(
      'AGENT_BOOTSTRAP_UNSIGNED',
    );
    // Signed by a key of the forger's own: refused before any stanza is opened.
    const signed = forgeWithAgentKey(keys, attack, [stranger]);
    expect((await failure(loadBootstrap(signed, agentKey, undefined, withAdmins))).code).toBe(
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    );
  });

  it('S173 refuses one signed by another key before any stanza is opened (POLICY_SIGNER_THRESHOLD_NOT_MET)', async () => {
    const e = await failure(loadBootstrap(encrypted([stranger]), agentKey, undefined, withAdmins));
    expect(e.code).toBe('POLICY_SIGNER_THRESHOLD_NOT_MET');
    expect(e.message).toContain('AGENT_BOOTSTRAP_ADMIN_KEYS');
    // Not for this agent at all: the signature decides first, no recipient is looked for.
    const other = makeKeys();
    for (const [signers, code] of [
      [[stranger], 'POLICY_SIGNER_THRESHOLD_NOT_MET'],
      [[], 'AGENT_BOOTSTRAP_UNSIGNED'],
    ] as const) {
      const e2 = await failure(
        loadBootstrap(encrypted([...signers], other.agent), agentKey, undefined, withAdmins),
      );
      expect(e2.code).toBe(code);
    }
  });

  it('S173 refuses an encrypted bootstrap with any byte changed after signing', async () => {
    const pkg = decodeBase64(encrypted([adminA]));
    for (let i = 0; i < pkg.length; i += 1) {
      const changed = pkg.slice();
      changed[i]! ^= 0x01;
      const e = await failure(loadBootstrap(encodeBase64(changed), agentKey, undefined, withAdmins));
      expect(e.code).toMatch(/^(FORMAT_|POLICY_|CRYPTO_|AGENT_BOOTSTRAP_UNSIGNED$)/);
    }
  }, 120_000);

  it('S173 starts from a correctly signed encrypted bootstrap and reports the signature', async () => {
    const loaded = await loadBootstrap(encrypted([adminA]), agentKey, undefined, withAdmins);
    expect(loaded.bootstrap[0]?.deploymentId).toBe('dep-1');
    expect(loaded.form).toBe('encrypted');
    expect(loaded.trust).toMatchObject({ signature: 'verified', signers: ['AGENT_BOOTSTRAP_ADMIN_KEYS[0]'] });
    expect(typeof loaded.trust.sequence).toBe('number');
  });

  it('S173 refuses a signed encrypted bootstrap past its expiresAt plus 300 s with POLICY_EXPIRED', async () => {
    const text = encrypted([adminA], keys.agent, { expiresAt: new Date(Date.now() - 600_000) });
    expect((await failure(loadBootstrap(text, agentKey, undefined, withAdmins))).code).toBe('POLICY_EXPIRED');
  });
});

describe('without administrator keys', () => {
  it('starts as before and reports the bootstrap unsigned, or signed but not checked', async () => {
    expect((await loadBootstrap(plainFile(json), undefined)).trust.signature).toBe('unsigned');
    expect((await loadBootstrap(json, undefined)).trust.signature).toBe('unsigned');
    const signedByStranger = plainFile(json, signBootstrap(bytes, { signers: [signer(stranger)] }));
    expect((await loadBootstrap(signedByStranger, undefined)).trust).toMatchObject({
      signature: 'signed, not checked',
      signatureFile: `${signedByStranger}.sig`,
    });
    expect((await loadBootstrap(encrypted([]), agentKey)).trust.signature).toBe('unsigned');
    expect((await loadBootstrap(encrypted([stranger]), agentKey)).trust.signature).toBe(
      'signed, not checked',
    );
  });
});
