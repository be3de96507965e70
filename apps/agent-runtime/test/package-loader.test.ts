import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeploymentRecord } from '@org/workflow-compiler';
import { describe, expect, it } from 'vitest';
import { loadWorkflow } from '../src/startup/package-loader.js';
import { canonicalize } from '@org/workflow-compiler';
import { echoWorkflow, encryptedBootstrap, makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

const keys = makeKeys();
const dir = tempDir();
const options = { allowUnpackaged: false, maxPackageBytes: 1 << 20, baseDir: dir };

function rec(path: string, extra: Record<string, unknown> = {}): DeploymentRecord {
  return makeRecord(keys, path, extra) as unknown as DeploymentRecord;
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not reject');
}

describe('loadWorkflow', () => {
  it('opens a package that meets every rule', async () => {
    const loaded = await loadWorkflow(rec(writePackage(dir, keys)), options);
    expect(loaded.source).toBe('package');
    expect(JSON.stringify(loaded.workflow)).toContain('"stepId":"echo"');
  });

  // Regression (ADR 0085): verified content that is not the JCS form of a compiled workflow is refused.
  it('refuses an uncompiled workflow as package content with WORKFLOW_NOT_COMPILED', async () => {
    const uncompiled = {
      workflows: [{ name: 'w', steps: [{ stepId: 'echo', resultsProcessor: { resource: 'a.js' } }] }],
    };
    const content = new TextEncoder().encode(canonicalize(uncompiled));
    const e = await codeOf(loadWorkflow(rec(writePackage(dir, keys, { content })), options));
    expect(e.code).toBe('WORKFLOW_NOT_COMPILED');
    expect(e.message).toContain('deployment "dep-1"');
  });

  it('refuses non-canonical JSON of a compiled workflow with WORKFLOW_NOT_CANONICAL', async () => {
    for (const text of [
      JSON.stringify(echoWorkflow()),
      JSON.stringify(echoWorkflow(), null, 2),
      `${canonicalize(echoWorkflow())}\n`,
    ]) {
      const content = new TextEncoder().encode(text);
      const e = await codeOf(loadWorkflow(rec(writePackage(dir, keys, { content })), options));
      expect(e.code).toBe('WORKFLOW_NOT_CANONICAL');
      expect(e.message).toContain('deployment "dep-1"');
    }
  });

  it('refuses a wrong packageId with POLICY_PACKAGE_ID_MISMATCH (S101)', async () => {
    const e = await codeOf(loadWorkflow(rec(writePackage(dir, keys, { packageId: 'other-app' })), options));
    expect(e.code).toBe('POLICY_PACKAGE_ID_MISMATCH');
    expect(e.message).toContain('dep-1');
  });

  it('refuses an untrusted packager identity with POLICY_PACKAGER_NOT_TRUSTED (S75)', async () => {
    const path = writePackage(dir, keys, { packager: makeKeys().packager });
    expect((await codeOf(loadWorkflow(rec(path), options))).code).toBe('POLICY_PACKAGER_NOT_TRUSTED');
  });

  it('refuses a missing required signer with POLICY_REQUIRED_SIGNER_MISSING naming it (S86)', async () => {
    const e = await codeOf(loadWorkflow(rec(writePackage(dir, keys, { signers: [keys.reviewA] })), options));
    expect(e.code).toBe('POLICY_REQUIRED_SIGNER_MISSING');
    expect(e.message).toContain('author');
  });

  it('refuses a threshold not met with POLICY_SIGNER_THRESHOLD_NOT_MET (S88, S91)', async () => {
    const record = rec(writePackage(dir, keys, { signers: [keys.author, keys.reviewA] }));
    record.packaging!.requiredAdditionalSignerCount = 2;
    const e = await codeOf(loadWorkflow(record, options));
    expect(e.code).toBe('POLICY_SIGNER_THRESHOLD_NOT_MET');
    expect(e.message).toContain('1 of 2');
  });

  it('refuses a tampered package and installs nothing (S85, S99)', async () => {
    const path = writePackage(dir, keys);
    const bytes = readFileSync(path);
    bytes[bytes.length - 20]! ^= 1;
    const tampered = join(dir, 'tampered.oapp');
    writeFileSync(tampered, bytes);
    expect((await codeOf(loadWorkflow(rec(tampered), options))).code).toMatch(/^CRYPTO_/);
  });

  it('refuses a package not encrypted for this deployment (S72)', async () => {
    const other = { ...keys, deployment: makeKeys().deployment };
    const e = await codeOf(loadWorkflow(rec(writePackage(dir, other)), options));
    expect(e.code).toBe('CRYPTO_NO_MATCHING_RECIPIENT');
  });

  it('refuses a record without exactly one deployment key', async () => {
    const record = rec(writePackage(dir, keys));
    record.keys = record.keys!.filter((k) => k.type !== 'secret');
    record.packaging!.packagerIdentities = [];
    expect((await codeOf(loadWorkflow(record, options))).code).toBe('AGENT_DEPLOYMENT_KEY_INVALID');
  });

  it('refuses a wrong magic with FORMAT_BAD_MAGIC (S54)', async () => {
    const path = join(dir, 'text.oapp');
    writeFileSync(path, 'PK\u0003\u0004 not a package');
    expect((await codeOf(loadWorkflow(rec(path), options))).code).toBe('FORMAT_BAD_MAGIC');
  });

  it('refuses an encrypted bootstrap given as the app package with FORMAT_WRONG_KIND (S60)', async () => {
    const path = join(dir, 'bootstrap-as-app.oapp');
    writeFileSync(path, Buffer.from(encryptedBootstrap({ ...keys, agent: keys.deployment }, [{}]), 'base64'));
    expect((await codeOf(loadWorkflow(rec(path), options))).code).toBe('FORMAT_WRONG_KIND');
  });

  it('refuses plain workflow JSON unless AGENT_ALLOW_UNPACKAGED is set', async () => {
    const path = join(dir, 'plain.json');
    writeFileSync(path, JSON.stringify(echoWorkflow()));
    expect((await codeOf(loadWorkflow(rec(path), options))).code).toBe('AGENT_UNPACKAGED_REFUSED');
    const loaded = await loadWorkflow(rec(path), { ...options, allowUnpackaged: true });
    expect(loaded.source).toBe('unpackaged');
  });

  it('refuses URLs and unreadable paths', async () => {
    const url = await codeOf(loadWorkflow(rec('https://example.com/app.oapp'), options));
    expect(url.code).toBe('AGENT_REMOTE_CONFIGURATION_UNSUPPORTED');
    const missing = await codeOf(loadWorkflow(rec(join(dir, 'missing.oapp')), options));
    expect(missing.code).toBe('AGENT_REMOTE_CONFIGURATION_UNREADABLE');
  });
});
