import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { encryptBootstrap, signBootstrap } from '@org/oapp-format';
import { afterEach, describe, expect, it } from 'vitest';
import { BOOTSTRAP_RELEASE_FILE, RELEASES_DIR } from '../../src/startup/release-store.js';
import { makeKeys, makeRecord, tempDir, tuple, writePackage } from '../fixtures.js';
import { freePort, killAll, listeningLine, logLine, refusal, spawnMain } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');
const keys = makeKeys();
const admin = generateKeyPair('sign');
const signers = [{ secretKey: admin.secretKey, signText: 'release administrator' }];

afterEach(() => killAll());

/** Bootstrap JSON for one package (`dep-1`) on a free port; `remoteConfiguration` may name a missing file. */
async function bootstrapJson(dir: string, o: { missingPackage?: boolean } = {}): Promise<Uint8Array> {
  const path =
    o.missingPackage === true ? join(dir, 'missing.oapp') : writePackage(dir, keys, { sequence: 1 });
  const record = makeRecord(keys, path, { allowHttpServerAccess: [{ id: 'api', port: await freePort() }] });
  return new TextEncoder().encode(JSON.stringify([record]));
}

/** A plain bootstrap file signed by the administrator with `sequence` (`.sig` beside it); returns its path. */
function signedFile(dir: string, bytes: Uint8Array, sequence: number, expiresAt?: Date): string {
  const path = join(dir, `bootstrap-${sequence}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, bytes);
  const times =
    expiresAt === undefined ? {} : { createdAt: new Date(expiresAt.getTime() - 3_600_000), expiresAt };
  writeFileSync(`${path}.sig`, signBootstrap(bytes, { signers, sequence, ...times }));
  return path;
}

describe('the agent process: rollback of signed bootstraps (ADR 0147)', () => {
  it('S173: after kill -9 right after a signed bootstrap was accepted, an older validly signed one is refused with POLICY_ROLLBACK', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const env = { AGENT_DATA_DIR: dataDir, AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!) };
    const bytes = await bootstrapJson(dir);
    const older = signedFile(dir, bytes, 4);
    const newer = signedFile(dir, bytes, 5);
    const first = spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: newer }, dir);
    await listeningLine(first);
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(logLine(first, 'bootstrap')).toMatchObject({
      signature: 'verified',
      sequence: 5,
      verdict: 'first',
      rollback: 'no floor set, remembered newest 5',
    });
    expect(existsSync(join(dataDir, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE))).toBe(true);
    // The older bootstrap (say, one that still trusts a retired packager key) is validly signed, and refused.
    const fatal = await refusal(spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: older }, dir));
    expect(fatal.code).toBe('POLICY_ROLLBACK');
    expect(fatal.msg).toContain("the bootstrap's signed sequence 4 is older than sequence 5");
    // The same one again starts, after a restart.
    const again = spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: newer }, dir);
    await listeningLine(again);
    expect(logLine(again, 'bootstrap')).toMatchObject({ sequence: 5, verdict: 'same' });
    again.proc.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    // Encrypted, at a lower sequence: refused the same way.
    const encrypted = join(dir, 'older.enc');
    writeFileSync(
      encrypted,
      encryptBootstrap(bytes, {
        packagerSecretKey: keys.packager.secretKey,
        recipients: [keys.agent.publicKey!],
        signers,
        sequence: 3,
      }),
    );
    const enc = await refusal(
      spawnMain(
        AGENT,
        { ...env, AGENT_BOOTSTRAP: encrypted, AGENT_BOOTSTRAP_SECRETKEY: tuple(keys.packager, keys.agent) },
        dir,
      ),
    );
    expect(enc.code).toBe('POLICY_ROLLBACK');
    expect(enc.msg).toContain("the bootstrap's signed sequence 3");
  }, 120_000);

  it('S173: a signed bootstrap whose start-up fails later is not remembered, so the one before it still starts', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const env = { AGENT_DATA_DIR: dataDir, AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!) };
    const broken = signedFile(dir, await bootstrapJson(dir, { missingPackage: true }), 9);
    const refused = await refusal(spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: broken }, dir));
    expect(refused.code).not.toMatch(/^POLICY_/);
    expect(existsSync(join(dataDir, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE))).toBe(false);
    const ok = spawnMain(
      AGENT,
      { ...env, AGENT_BOOTSTRAP: signedFile(dir, await bootstrapJson(dir), 8) },
      dir,
    );
    await listeningLine(ok);
    expect(logLine(ok, 'bootstrap')).toMatchObject({ sequence: 8, verdict: 'first' });
  }, 120_000);

  it('S173: AGENT_BOOTSTRAP_MINIMUM_SEQUENCE refuses a lower signed bootstrap with AGENT_DATA_DIR=off (POLICY_BELOW_MINIMUM)', async () => {
    const dir = tempDir();
    const env = {
      AGENT_DATA_DIR: 'off',
      AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!),
      AGENT_BOOTSTRAP_MINIMUM_SEQUENCE: '10',
    };
    const bytes = await bootstrapJson(dir);
    const fatal = await refusal(
      spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: signedFile(dir, bytes, 9) }, dir),
    );
    expect(fatal.code).toBe('POLICY_BELOW_MINIMUM');
    expect(fatal.msg).toContain(
      "the bootstrap's signed sequence 9 is below AGENT_BOOTSTRAP_MINIMUM_SEQUENCE 10",
    );
    const ok = spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: signedFile(dir, bytes, 10) }, dir);
    await listeningLine(ok);
    expect(logLine(ok, 'bootstrap')).toMatchObject({
      sequence: 10,
      verdict: 'first',
      rollback: 'no data directory: floor only (floor 10)',
    });
    // Without administrator keys the floor means nothing (no sequence is known): a configuration error.
    const { AGENT_BOOTSTRAP_ADMIN_KEYS: _, ...noKeys } = env;
    const config = await refusal(
      spawnMain(AGENT, { ...noKeys, AGENT_BOOTSTRAP: signedFile(dir, bytes, 10) }, dir),
    );
    expect(config.code).toBe('AGENT_CONFIG_INVALID');
    expect(config.msg).toContain('AGENT_BOOTSTRAP_MINIMUM_SEQUENCE');
  }, 120_000);

  it('S173: AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO accepts exactly that older bootstrap with a warning and remembers it', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const env = { AGENT_DATA_DIR: dataDir, AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!) };
    const bytes = await bootstrapJson(dir);
    const first = spawnMain(AGENT, { ...env, AGENT_BOOTSTRAP: signedFile(dir, bytes, 30) }, dir);
    await listeningLine(first);
    first.proc.kill('SIGKILL');
    await first.exited;
    const down = { ...env, AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO: '29' };
    expect(
      (await refusal(spawnMain(AGENT, { ...down, AGENT_BOOTSTRAP: signedFile(dir, bytes, 28) }, dir))).code,
    ).toBe('POLICY_ROLLBACK');
    const agent = spawnMain(AGENT, { ...down, AGENT_BOOTSTRAP: signedFile(dir, bytes, 29) }, dir);
    await listeningLine(agent);
    expect(logLine(agent, 'deliberate bootstrap downgrade')).toMatchObject({
      level: 'warn',
      sequence: 29,
      newestBefore: 30,
    });
    expect(logLine(agent, 'bootstrap')).toMatchObject({
      sequence: 29,
      verdict: 'allowed-downgrade',
      allowDowngradeTo: 29,
      rollback: 'no floor set, remembered newest 29',
    });
    const record = JSON.parse(readFileSync(join(dataDir, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE), 'utf8')) as {
      sequence: number;
    };
    expect(record.sequence).toBe(29);
  }, 120_000);

  it('S172: an expired signed bootstrap is refused with POLICY_EXPIRED; nothing is remembered', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const bytes = await bootstrapJson(dir);
    const path = signedFile(dir, bytes, 40, new Date(Date.now() - 600_000));
    const fatal = await refusal(
      spawnMain(
        AGENT,
        {
          AGENT_DATA_DIR: dataDir,
          AGENT_BOOTSTRAP_ADMIN_KEYS: keyToHex(admin.publicKey!),
          AGENT_BOOTSTRAP: path,
        },
        dir,
      ),
    );
    expect(fatal.code).toBe('POLICY_EXPIRED');
    expect(fatal.msg).toContain('the signed bootstrap is refused (signature file');
    expect(fatal.msg).toContain('expired');
    expect(existsSync(join(dataDir, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE))).toBe(false);
  }, 60_000);
});
