import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseKeyTuple } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { describe, expect, it } from 'vitest';
import { loadBootstrap } from '../src/startup/bootstrap-source.js';
import { encryptedBootstrap, makeKeys, makeRecord, tempDir, tuple } from './fixtures.js';

const keys = makeKeys();
const dir = tempDir();
const record = makeRecord(keys, 'app.oapp');
const json = JSON.stringify([record]);
const agentKey = parseKeyTuple(tuple(keys.packager, keys.agent));

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not reject');
}

describe('loadBootstrap', () => {
  it('reads a file path, Base64 text and JSON text', async () => {
    const file = join(dir, 'bootstrap.json');
    writeFileSync(file, json);
    expect((await loadBootstrap(file, undefined)).form).toBe('file');
    const b64 = await loadBootstrap(Buffer.from(json).toString('base64'), undefined);
    expect(b64.form).toBe('base64');
    expect(b64.bootstrap[0]?.deploymentId).toBe('dep-1');
    expect((await loadBootstrap(json, undefined)).form).toBe('json');
  });

  it('accepts a bare record as a one-element array', async () => {
    const { bootstrap } = await loadBootstrap(JSON.stringify(record), undefined);
    expect(bootstrap).toHaveLength(1);
  });

  it('opens encrypted text and an encrypted file with AGENT_BOOTSTRAP_SECRETKEY', async () => {
    const text = encryptedBootstrap(keys, [record]);
    expect((await loadBootstrap(text, agentKey)).form).toBe('encrypted');
    const file = join(dir, 'bootstrap.enc');
    writeFileSync(file, text + '\n');
    expect((await loadBootstrap(file, agentKey)).form).toBe('encrypted-file');
  });

  it('refuses an encrypted bootstrap without the key, naming the variable (S44)', async () => {
    const e = await failure(loadBootstrap(encryptedBootstrap(keys, [record]), undefined));
    expect(e.code).toBe('AGENT_BOOTSTRAP_SECRETKEY_MISSING');
    expect(e.message).toContain('AGENT_BOOTSTRAP_SECRETKEY');
  });

  it('refuses a wrong key, and swapped halves, without key material (S46, S114)', async () => {
    const text = encryptedBootstrap(keys, [record]);
    const other = makeKeys();
    const wrong = await failure(loadBootstrap(text, parseKeyTuple(tuple(keys.packager, other.agent))));
    expect(wrong.code).toBe('CRYPTO_NO_MATCHING_RECIPIENT');
    expect(wrong.message).toContain('AGENT_BOOTSTRAP_SECRETKEY');
    const swapped = await failure(loadBootstrap(text, parseKeyTuple(tuple(keys.agent, keys.packager))));
    expect(swapped.code).toMatch(/^(CRYPTO|POLICY)_/);
    for (const e of [wrong, swapped]) expect(e.message).not.toMatch(/[0-9a-f]{32}/i);
  });

  it('refuses an app package given as the bootstrap with FORMAT_WRONG_KIND (S60)', async () => {
    const app = createPackage({
      packageId: 'bootstrap',
      content: new TextEncoder().encode(json),
      packagerSecretKey: keys.packager.secretKey,
      recipients: [keys.agent.publicKey!],
    });
    const e = await failure(loadBootstrap(Buffer.from(app).toString('base64'), agentKey));
    expect(e.code).toBe('FORMAT_WRONG_KIND');
  });

  it('reports every schema problem with WORKFLOW_BOOTSTRAP_INVALID', async () => {
    const e = await failure(loadBootstrap(JSON.stringify([{ deploymentId: 1, extra: true }]), undefined));
    expect(e.code).toBe('WORKFLOW_BOOTSTRAP_INVALID');
    const errors = (e.details as { errors?: unknown[] } | undefined)?.errors ?? [];
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });

  it('refuses duplicate keys in the bootstrap (S65) and text that is no bootstrap', async () => {
    const dup = await failure(loadBootstrap('{"deploymentId":"a","deploymentId":"b"}', undefined));
    expect(dup.code).toBe('WORKFLOW_JSON_DUPLICATE_KEY');
    const none = await failure(loadBootstrap('not a path, not base64!', undefined));
    expect(none.code).toBe('AGENT_BOOTSTRAP_UNREADABLE');
  });

  it('refuses Base64 with inner whitespace instead of skipping it (S61)', async () => {
    const b64 = Buffer.from(json).toString('base64');
    const e = await failure(loadBootstrap(b64.slice(0, 8) + ' ' + b64.slice(8), undefined));
    expect(e.code).toBe('AGENT_BOOTSTRAP_UNREADABLE');
  });

  it('names the path it tried when the bootstrap file is missing or unreadable, never the content', async () => {
    for (const path of [join(dir, 'missing.json'), './nowhere/boot.oapp', '/no/such/bootstrap']) {
      const e = await failure(loadBootstrap(path, undefined));
      expect(e.code).toBe('AGENT_BOOTSTRAP_UNREADABLE');
      expect(e.message).toBe(`the bootstrap file ${JSON.stringify(path)} does not exist`);
    }
    const unreadable = await failure(loadBootstrap(dir, undefined));
    expect(unreadable.message).toBe(`the bootstrap file ${JSON.stringify(dir)} cannot be read (EISDIR)`);
    // Text that is not path-like is not quoted: it may be a secret (a mistyped Base64 or encrypted bootstrap).
    const secret = 'c2VjcmV0LXZhbHVl!';
    const e = await failure(loadBootstrap(secret, undefined));
    expect(e.message).not.toContain(secret);
  });
});
