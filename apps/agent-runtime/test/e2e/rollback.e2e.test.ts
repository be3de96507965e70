import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { encryptBootstrap, signBootstrap } from '@org/oapp-format';
import { afterEach, describe, expect, it } from 'vitest';
import {
  forgeWithAgentKey,
  makeKeys,
  makeRecord,
  tempDir,
  tuple,
  writePackage,
  type PackageOptions,
} from '../fixtures.js';
import { freePort, killAll, listeningLine, logLine, refusal, spawnMain } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');
const keys = makeKeys();

afterEach(() => killAll());

/** A bootstrap file for one package (`dep-1`, package id echo-app) on a free port; returns its path. */
async function bootstrapFile(dir: string, pkg: PackageOptions, packaging: Record<string, unknown> = {}) {
  const record = makeRecord(keys, writePackage(dir, keys, pkg), {
    allowHttpServerAccess: [{ id: 'api', port: await freePort() }],
  });
  const path = join(dir, `bootstrap-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify([{ ...record, packaging: { ...record.packaging, ...packaging } }]));
  return path;
}

describe('the agent process: rollback, floor, signed bootstraps', () => {
  it('S169: after kill -9 right after a newer release was accepted, the older one is refused with POLICY_ROLLBACK', async () => {
    const dir = tempDir();
    const env = { AGENT_DATA_DIR: join(dir, 'data') };
    const newer = await bootstrapFile(dir, { sequence: 20 });
    const first = spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: newer }, dir);
    await listeningLine(first);
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(logLine(first, 'package release')).toMatchObject({ sequence: 20, verdict: 'first' });
    const second = spawnMain(
      AGENT,
      { ...env, AGENT_BOOTSTRAP: await bootstrapFile(dir, { sequence: 19 }) },
      dir,
    );
    const fatal = await refusal(second);
    expect(fatal.code).toBe('POLICY_ROLLBACK');
    expect(fatal.msg).toContain('deployment "dep-1"');
    // The same package again starts.
    const third = spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: newer }, dir);
    await listeningLine(third);
    expect(logLine(third, 'package release')).toMatchObject({
      sequence: 20,
      verdict: 'same',
      rollback: 'no floor set, remembered newest 20',
    });
  }, 120_000);

  it('S170: a package below packaging.minimumSequence is refused with AGENT_DATA_DIR=off and with an unwritable one', async () => {
    const dir = tempDir();
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    for (const dataDir of ['off', file]) {
      const bootstrap = await bootstrapFile(dir, { sequence: 9 }, { minimumSequence: 10 });
      const child = spawnMain(AGENT, { AGENT_DATA_DIR: dataDir, AGENT_BOOTSTRAP: bootstrap }, dir);
      const fatal = await refusal(child);
      expect(fatal.code).toBe('POLICY_BELOW_MINIMUM');
      expect(fatal.msg).toContain('deployment "dep-1"');
    }
    const ok = spawnMain(
      AGENT,
      {
        AGENT_DATA_DIR: 'off',
        AGENT_BOOTSTRAP: await bootstrapFile(dir, { sequence: 10 }, { minimumSequence: 10 }),
      },
      dir,
    );
    await listeningLine(ok);
    expect(logLine(ok, 'package release')).toMatchObject({
      rollback: 'no data directory: floor only (floor 10)',
    });
  }, 120_000);

  it('S173: with AGENT_BOOTSTRAP_ADMIN_KEYS an unsigned bootstrap is refused with AGENT_BOOTSTRAP_UNSIGNED; a signed one starts', async () => {
    const dir = tempDir();
    const admin = generateKeyPair('sign');
    const bootstrap = await bootstrapFile(dir, { sequence: 1 });
    const env = {
      AGENT_DATA_DIR: join(dir, 'data'),
      AGENT_BOOTSTRAP: bootstrap,
      AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!),
    };
    const unsigned = await refusal(spawnMain(AGENT, env, dir));
    expect(unsigned.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    expect(unsigned.msg).toContain(`${bootstrap}.sig`);
    const stranger = generateKeyPair('sign');
    const bytes = readFileSync(bootstrap);
    writeFileSync(
      `${bootstrap}.sig`,
      signBootstrap(bytes, { signers: [{ secretKey: stranger.secretKey, signText: 'b' }] }),
    );
    expect((await refusal(spawnMain(AGENT, env, dir))).code).toBe('POLICY_SIGNER_THRESHOLD_NOT_MET');
    writeFileSync(
      `${bootstrap}.sig`,
      signBootstrap(bytes, { signers: [{ secretKey: admin.secretKey, signText: 'b' }], sequence: 5 }),
    );
    const signed = spawnMain(AGENT, env, dir);
    await listeningLine(signed);
    expect(logLine(signed, 'bootstrap')).toMatchObject({
      form: 'file',
      signature: 'verified',
      sequence: 5,
      signers: 'AGENT_BOOTSTRAP_ADMIN_KEYS[0]',
    });
    signed.proc.kill('SIGTERM');
    expect(await signed.exited).toBe(0);
    // Without administrator keys it starts as before and says the signature was not checked.
    const { AGENT_BOOTSTRAP_ADMIN_KEYS: _, ...plain } = env;
    const unchecked = spawnMain(AGENT, plain, dir);
    await listeningLine(unchecked);
    expect(logLine(unchecked, 'bootstrap')).toMatchObject({ signature: 'signed, not checked' });
  }, 120_000);

  it('S173: an encrypted bootstrap forged with the agent own secret key is refused; one with administrator records starts', async () => {
    const dir = tempDir();
    const admin = generateKeyPair('sign');
    const records = JSON.parse(readFileSync(await bootstrapFile(dir, { sequence: 1 }), 'utf8')) as unknown[];
    const env = {
      AGENT_DATA_DIR: join(dir, 'data'),
      AGENT_BOOTSTRAP_SECRETKEY: tuple(keys.packager, keys.agent),
      AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!),
    };
    const forged = join(dir, 'forged.enc');
    writeFileSync(forged, forgeWithAgentKey(keys, records));
    const refused = await refusal(spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: forged }, dir));
    expect(refused.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    const signed = join(dir, 'signed.enc');
    writeFileSync(
      signed,
      encryptBootstrap(new TextEncoder().encode(JSON.stringify(records)), {
        packagerSecretKey: keys.packager.secretKey,
        recipients: [keys.agent.publicKey!],
        signers: [{ secretKey: admin.secretKey, signText: 'bootstrap' }],
      }),
    );
    const agent = spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: signed }, dir);
    await listeningLine(agent);
    expect(logLine(agent, 'bootstrap')).toMatchObject({ form: 'encrypted-file', signature: 'verified' });
  }, 120_000);
});
