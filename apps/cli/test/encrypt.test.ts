import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decryptString, parseKeyTuple } from '@org/envelope-crypto';
import { decryptBootstrap } from '@org/oapp-format';
import sodium from 'libsodium-wrappers';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, keyHex, oapp, tempDir } from './helpers.js';

const dir = tempDir();
const run = (args: string[], input?: string, env?: Record<string, string>) =>
  oapp(args, { cwd: dir, input, env });
const hex = (f: string) => keyHex(join(dir, f));
const seal = ['--packager-key', 'packager.key', '--recipient', 'agent.pub'];
const BOOTSTRAP = [{ deploymentId: 'd1', remoteConfiguration: 'x.oapp' }];

beforeAll(async () => {
  await sodium.ready;
  for (const k of ['packager', 'agent', 'other'])
    await run(['keygen', '--purpose', 'authenticated', '-o', `${k}.key`]);
  writeFileSync(join(dir, 'bootstrap.json'), JSON.stringify(BOOTSTRAP));
});

describe('encrypt-string', () => {
  it('stdin → -2/ text on stdout that libsodium crypto_box_open_easy opens', async () => {
    const r = await run(['encrypt-string', ...seal], 's3cret\n');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^-2\/[A-Za-z0-9+/]+=*\n$/);
    const envelope = sodium.from_base64(r.out.trim().slice(3), sodium.base64_variants.ORIGINAL);
    const plain = sodium.crypto_box_open_easy(
      envelope.subarray(24),
      envelope.subarray(0, 24),
      sodium.from_hex(hex('packager.pub')),
      sodium.from_hex(hex('agent.key')),
    );
    // Byte for byte: the trailing newline is part of the plaintext.
    expect(sodium.to_string(plain)).toBe('s3cret\n');
  });

  it('a file → -o FILE holds exactly the text (no newline); the agent decryptor opens it', async () => {
    writeFileSync(join(dir, 'secret.txt'), 'client-secret-1');
    const r = await run(['encrypt-string', 'secret.txt', '-o', 'secret.enc', '--json', ...seal]);
    expect(r.code).toBe(0);
    const text = readFileSync(join(dir, 'secret.enc'), 'utf8');
    expect(r.json()).toEqual({ ok: true, output: 'secret.enc', bytes: text.length });
    const tuple = parseKeyTuple(`${hex('packager.pub')}/${hex('agent.key')}`);
    expect(new TextDecoder().decode(decryptString(text, [tuple]))).toBe('client-secret-1');
  });

  it('--json to stdout gives {ok, text}', async () => {
    const r = await run(['encrypt-string', '--json', ...seal], 'x');
    expect(r.json()).toEqual({ ok: true, text: expect.stringMatching(/^-2\//) });
  });

  it('a plaintext over 64 KiB → exit 1, CRYPTO_TOO_LARGE', async () => {
    const r = await run(['encrypt-string', ...seal], 'a'.repeat(65_537));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: CRYPTO_TOO_LARGE: /);
  });
});

describe('encrypt-bootstrap / decrypt-bootstrap', () => {
  it('encrypts a valid bootstrap; oapp-format decryptBootstrap (the agent) and decrypt-bootstrap open it', async () => {
    const r = await run(['encrypt-bootstrap', 'bootstrap.json', '-o', 'bootstrap.enc', ...seal]);
    expect(r.code).toBe(0);
    const text = readFileSync(join(dir, 'bootstrap.enc'), 'utf8');
    const tupleText = `${hex('packager.pub')}/${hex('agent.key')}`;
    const plain = await decryptBootstrap(text, parseKeyTuple(tupleText));
    expect(JSON.parse(new TextDecoder().decode(plain))).toEqual(BOOTSTRAP);

    const viaEnv = await run(['decrypt-bootstrap', 'bootstrap.enc'], undefined, {
      AGENT_BOOTSTRAP_SECRETKEY: tupleText,
    });
    expect(viaEnv.code).toBe(0);
    expect(viaEnv.out).toBe(JSON.stringify(BOOTSTRAP));
    const viaFiles = await run(
      ['decrypt-bootstrap', '-', '--key', 'agent.key', '--sender', 'packager.pub', '--json'],
      text,
    );
    expect(viaFiles.json()).toEqual({ ok: true, bootstrap: BOOTSTRAP });
    const toFile = await run([
      'decrypt-bootstrap',
      'bootstrap.enc',
      '--key',
      'agent.key',
      '--sender',
      'packager.pub',
      '-o',
      'plain.json',
    ]);
    expect(toFile.code).toBe(0);
    expect(statSync(join(dir, 'plain.json')).mode & 0o777).toBe(0o600);
  });

  it('stdin → stdout, and a wrong key → exit 1 with the library code', async () => {
    const r = await run(['encrypt-bootstrap', ...seal], JSON.stringify(BOOTSTRAP));
    expect(r.code).toBe(0);
    const wrong = await run(['decrypt-bootstrap', '--key', 'other.key', '--sender', 'packager.pub'], r.out);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^oapp: CRYPTO_NO_MATCHING_RECIPIENT: /);
  });

  it('an invalid bootstrap is refused before anything is encrypted: exit 1, WORKFLOW_BOOTSTRAP_INVALID, no output', async () => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ deploymentId: 'd1' }]));
    const before = filesIn(dir);
    const r = await run(['encrypt-bootstrap', 'bad.json', '-o', 'bad.enc', ...seal]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: WORKFLOW_BOOTSTRAP_INVALID: [^\n]*\n$/);
    expect(filesIn(dir)).toEqual(before);
  });

  it('decrypt-bootstrap without any key → exit 2 naming AGENT_BOOTSTRAP_SECRETKEY', async () => {
    const r = await run(['decrypt-bootstrap', 'bootstrap.enc']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oapp: CLI_KEY_SOURCE: --key-tuple env:\/\/AGENT_BOOTSTRAP_SECRETKEY: /);
  });
});
