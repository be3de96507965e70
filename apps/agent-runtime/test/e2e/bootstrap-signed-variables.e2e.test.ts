import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { signBootstrap } from '@org/oapp-format';
import { afterEach, describe, expect, it } from 'vitest';
import { makeKeys, makeRecord, tempDir, writePackage } from '../fixtures.js';
import { freePort, killAll, listeningLine, logLine, refusal, spawnMain } from './spawn.js';

// The agent process with administrator keys: what the environment may and may not decide in a signed bootstrap
// (ADR 0147, "Variables in a signed bootstrap"), and a blank administrator variable (never "no administrators").

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');
const keys = makeKeys();
const admin = generateKeyPair('sign');
const signers = [{ secretKey: admin.secretKey, signText: 'release administrator' }];
const ATTACKER = 'attacker-chosen-value';

afterEach(() => killAll());

function signedFile(dir: string, record: Record<string, unknown>): string {
  const bytes = new TextEncoder().encode(JSON.stringify([record]));
  const path = join(dir, `bootstrap-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, bytes);
  writeFileSync(`${path}.sig`, signBootstrap(bytes, { signers, sequence: 1 }));
  return path;
}

describe('the agent process: variables in a signed bootstrap', () => {
  it('S173: refuses a signed bootstrap whose signers and package come from variables, naming pointer and variable, never the value', async () => {
    const dir = tempDir();
    const pkg = writePackage(dir, keys, { sequence: 1 });
    const record = makeRecord(keys, '${PKG_PATH}', {
      allowHttpServerAccess: [{ id: 'api', port: await freePort() }],
    });
    record.packaging.requiredSigners = [{ id: '${SIGNER}' }];
    const env = {
      AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!),
      AGENT_BOOTSTRAP: signedFile(dir, record),
      PKG_PATH: pkg,
      SIGNER: ATTACKER,
    };
    const fatal = await refusal(spawnMain(AGENT, env, dir));
    expect(fatal.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    expect(fatal.msg).toContain('PKG_PATH at "/0/remoteConfiguration"');
    expect(fatal.msg).toContain('SIGNER at "/0/packaging/requiredSigners/0/id"');
    expect(fatal.msg).not.toContain(ATTACKER);
    expect(fatal.msg).not.toContain(pkg);
  }, 60_000);

  it('S173: starts from a signed bootstrap with variables only in credentials and data, reporting their names', async () => {
    const dir = tempDir();
    const record = makeRecord(keys, writePackage(dir, keys, { sequence: 1 }), {
      allowHttpServerAccess: [{ id: 'api', port: await freePort() }],
      allowExternalHostAccess: [
        {
          id: 'up',
          host: 'https://upstream.example.test/',
          headers: { Authorization: 'Bearer ${API_TOKEN}' },
        },
      ],
      data: { region: '${REGION}' },
    });
    const child = spawnMain(
      AGENT,
      {
        AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!),
        AGENT_BOOTSTRAP: signedFile(dir, record),
        API_TOKEN: ATTACKER,
        REGION: 'eu',
      },
      dir,
    );
    await listeningLine(child);
    expect(logLine(child, 'bootstrap')).toMatchObject({
      signature: 'verified',
      variables: 'API_TOKEN,REGION',
    });
    expect(child.stdout()).not.toContain(ATTACKER);
  }, 60_000);

  it('S173: AGENT_BOOTSTRAP_ADMIN_KEYS set but blank stops start-up (AGENT_CONFIG_INVALID), it does not start unsigned', async () => {
    const dir = tempDir();
    const record = makeRecord(keys, writePackage(dir, keys, { sequence: 1 }), {
      allowHttpServerAccess: [{ id: 'api', port: await freePort() }],
    });
    const unsigned = join(dir, 'unsigned.json');
    writeFileSync(unsigned, JSON.stringify([record]));
    for (const [name, value] of [
      ['AGENT_BOOTSTRAP_ADMIN_KEYS', ''],
      ['AGENT_BOOTSTRAP_ADMIN_KEYS_FILE', '  '],
    ] as const) {
      const fatal = await refusal(spawnMain(AGENT, { AGENT_BOOTSTRAP: unsigned, [name]: value }, dir));
      expect(fatal.code).toBe('AGENT_CONFIG_INVALID');
      expect(fatal.msg).toContain(`${name} is set but blank`);
    }
  }, 60_000);
});
