import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair } from '@org/envelope-crypto';
import { checkFreshness, encryptBootstrap, signBootstrap } from '@org/oapp-format';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkBootstrapRelease, rememberBootstrapRelease } from '../src/startup/bootstrap-release.js';
import {
  bootstrapReport,
  loadBootstrap,
  type BootstrapTrustOptions,
  type LoadedBootstrap,
} from '../src/startup/bootstrap-source.js';
import { BOOTSTRAP_RELEASE_FILE, releaseStore, RELEASES_DIR } from '../src/startup/release-store.js';
import {
  administratorsOf,
  agentKeyOf,
  bootstrapFile,
  bootstrapSigner,
  failure,
} from './bootstrap-signing.js';
import { makeKeys, makeRecord, tempDir } from './fixtures.js';

const keys = makeKeys();
const agentKey = agentKeyOf(keys);
const admin = generateKeyPair('sign');
const administrators = administratorsOf([admin]);
const signers = [bootstrapSigner(admin)];

/** Bootstrap JSON bytes; `id` changes the content. */
const bytesOf = (id = 'dep-1') =>
  new TextEncoder().encode(JSON.stringify([makeRecord(keys, 'app.oapp', { deploymentId: id })]));

/** A plain bootstrap file signed by the administrator with `sequence`, beside its `.sig`. */
const signedFile = (dir: string, sequence: number, bytes = bytesOf()): string =>
  bootstrapFile(dir, bytes, signBootstrap(bytes, { signers, sequence }));

function encrypted(sequence: number | undefined, bytes = bytesOf(), formatVersion: 1 | 2 = 2): string {
  return encryptBootstrap(bytes, {
    packagerSecretKey: keys.packager.secretKey,
    recipients: [keys.agent.publicKey!],
    signers,
    formatVersion,
    ...(sequence === undefined ? {} : { sequence }),
  });
}

const options = (rollback: BootstrapTrustOptions['rollback']): BootstrapTrustOptions => ({
  administrators,
  rollback,
});

/** loadBootstrap, then what a start-up that succeeded does: remember the bootstrap's release. */
async function accept(source: string, o: BootstrapTrustOptions): Promise<LoadedBootstrap> {
  const loaded = await loadBootstrap(source, agentKey, undefined, o);
  rememberBootstrapRelease(loaded.trust.rollback);
  return loaded;
}

describe('S173: rollback of signed bootstraps (ADR 0147)', () => {
  it('S173 refuses an older signed bootstrap with POLICY_ROLLBACK saying it is the bootstrap; the same again starts', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const o = options({ dataDir });
    const five = signedFile(dir, 5);
    const first = await loadBootstrap(five, undefined, undefined, o);
    expect(first.trust.rollback).toMatchObject({
      verdict: 'first',
      state: 'no floor set, remembered newest 5',
    });
    // loadBootstrap writes nothing: only a start-up that succeeded does.
    expect(existsSync(join(dataDir, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE))).toBe(false);
    expect((await loadBootstrap(signedFile(dir, 4), undefined, undefined, o)).trust.rollback?.verdict).toBe(
      'first',
    );
    rememberBootstrapRelease(first.trust.rollback);
    expect(releaseStore(dataDir).newestBootstrap()?.sequence).toBe(5);
    const e = await failure(loadBootstrap(signedFile(dir, 4), undefined, undefined, o));
    expect(e.code).toBe('POLICY_ROLLBACK');
    expect(e.message).toContain("the bootstrap's signed sequence 4 is older than sequence 5");
    expect(e.message).toContain(join(dataDir, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE));
    expect(e.message).toContain('AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO=4');
    // The same bootstrap (other signature, same bytes and sequence) starts and changes nothing.
    const again = await loadBootstrap(signedFile(dir, 5), undefined, undefined, o);
    expect(again.trust.rollback).toMatchObject({ verdict: 'same', pending: undefined, newestBefore: 5 });
    // The same sequence over other content: POLICY_SEQUENCE_REUSED.
    const reused = await failure(
      loadBootstrap(signedFile(dir, 5, bytesOf('other')), undefined, undefined, o),
    );
    expect(reused.code).toBe('POLICY_SEQUENCE_REUSED');
    expect(reused.message).toContain('the bootstrap reuses signed sequence 5');
    // A newer one is accepted and becomes the newest.
    const six = await accept(signedFile(dir, 6, bytesOf('other')), o);
    expect(six.trust.rollback).toMatchObject({ verdict: 'newer', newestBefore: 5 });
    expect(releaseStore(dataDir).newestBootstrap()?.sequence).toBe(6);
    expect((await failure(loadBootstrap(five, undefined, undefined, o))).code).toBe('POLICY_ROLLBACK');
  }, 30_000);

  it('S173 refuses an older encrypted bootstrap, plain and encrypted sharing one history', async () => {
    const dir = tempDir();
    const o = options({ dataDir: join(dir, 'data') });
    await accept(signedFile(dir, 10), o);
    const e = await failure(loadBootstrap(encrypted(9), agentKey, undefined, o));
    expect(e.code).toBe('POLICY_ROLLBACK');
    expect(e.message).toContain("the bootstrap's signed sequence 9");
    // The same bytes at the same sequence, encrypted: the same release.
    const same = await loadBootstrap(encrypted(10), agentKey, undefined, o);
    expect(same.trust.rollback?.verdict).toBe('same');
    expect((await failure(loadBootstrap(encrypted(10, bytesOf('x')), agentKey, undefined, o))).code).toBe(
      'POLICY_SEQUENCE_REUSED',
    );
    // A v1 encrypted bootstrap has no sequence: refused once a signed sequence was accepted.
    const v1 = await failure(loadBootstrap(encrypted(undefined, bytesOf(), 1), agentKey, undefined, o));
    expect(v1.code).toBe('POLICY_ROLLBACK');
    expect(v1.message).toContain('the bootstrap is format v1');
  }, 30_000);

  it('S173 refuses a bootstrap below AGENT_BOOTSTRAP_MINIMUM_SEQUENCE without a data directory (POLICY_BELOW_MINIMUM)', async () => {
    const dir = tempDir();
    const o = options({ minimumSequence: 8 });
    const e = await failure(loadBootstrap(signedFile(dir, 7), undefined, undefined, o));
    expect(e.code).toBe('POLICY_BELOW_MINIMUM');
    expect(e.message).toContain(
      "the bootstrap's signed sequence 7 is below AGENT_BOOTSTRAP_MINIMUM_SEQUENCE 8",
    );
    expect((await failure(loadBootstrap(encrypted(7), agentKey, undefined, o))).code).toBe(
      'POLICY_BELOW_MINIMUM',
    );
    expect(
      (await failure(loadBootstrap(encrypted(undefined, bytesOf(), 1), agentKey, undefined, o))).code,
    ).toBe('POLICY_BELOW_MINIMUM');
    const ok = await accept(signedFile(dir, 8), o);
    expect(ok.trust.rollback).toMatchObject({
      verdict: 'first',
      state: 'no data directory: floor only (floor 8)',
      pending: undefined,
    });
    // The floor is checked before the data directory is read: an unreadable record does not change the verdict.
    const dataDir = join(dir, 'data');
    mkdirSync(join(dataDir, RELEASES_DIR), { recursive: true });
    writeFileSync(join(dataDir, RELEASES_DIR, BOOTSTRAP_RELEASE_FILE), 'not json');
    const below = options({ dataDir, minimumSequence: 8 });
    expect((await failure(loadBootstrap(signedFile(dir, 7), undefined, undefined, below))).code).toBe(
      'POLICY_BELOW_MINIMUM',
    );
    expect((await failure(loadBootstrap(signedFile(dir, 8), undefined, undefined, below))).code).toBe(
      'AGENT_RELEASE_STATE_UNREADABLE',
    );
  }, 30_000);

  it('S173 accepts the deliberate downgrade AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO, warns, and remembers it', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    await accept(signedFile(dir, 20, bytesOf('twenty')), options({ dataDir }));
    const down = options({ dataDir, allowDowngradeTo: 19 });
    // Only exactly that sequence.
    expect((await failure(loadBootstrap(signedFile(dir, 18), undefined, undefined, down))).code).toBe(
      'POLICY_ROLLBACK',
    );
    const loaded = await accept(signedFile(dir, 19), down);
    expect(loaded.trust.rollback).toMatchObject({ verdict: 'allowed-downgrade', newestBefore: 20 });
    expect(releaseStore(dataDir).newestBootstrap()?.sequence).toBe(19);
    const { line, warning } = bootstrapReport('file', loaded.trust);
    expect(line.fields).toMatchObject({
      signature: 'verified',
      sequence: 19,
      verdict: 'allowed-downgrade',
      allowDowngradeTo: 19,
      rollback: 'no floor set, remembered newest 19',
    });
    expect(warning?.msg).toBe('deliberate bootstrap downgrade');
    expect(warning?.fields).toMatchObject({ sequence: 19, newestBefore: 20 });
    // Once remembered, an older one than the downgrade is refused without the variable; sequence 20 is newer again.
    expect(
      (await failure(loadBootstrap(signedFile(dir, 18), undefined, undefined, options({ dataDir })))).code,
    ).toBe('POLICY_ROLLBACK');
    const back = await loadBootstrap(
      signedFile(dir, 20, bytesOf('twenty')),
      undefined,
      undefined,
      options({ dataDir }),
    );
    expect(back.trust.rollback?.verdict).toBe('newer');
  }, 30_000);

  it('S173 decides exactly as oapp-format checkFreshness does for a package (one rule, no drift)', () => {
    const content = bytesOf('agreement');
    const sha = createHash('sha256').update(content).digest('hex');
    const other = 'f'.repeat(64);
    const outcome = (f: () => { verdict: string }): string => {
      try {
        return f().verdict;
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    let compared = 0;
    for (const sequence of [null, 0, 4, 5, 6])
      for (const floor of [undefined, 0, 5])
        for (const newest of [undefined, 5])
          for (const newestSha of [sha, other])
            for (const allow of [undefined, 4, 5]) {
              if (newest === undefined && newestSha === other) continue;
              const dataDir = join(tempDir(), 'data');
              if (newest !== undefined)
                releaseStore(dataDir).rememberBootstrap({ sequence: newest, contentSha256: newestSha });
              const ours = outcome(() =>
                checkBootstrapRelease(sequence, content, {
                  dataDir,
                  minimumSequence: floor,
                  allowDowngradeTo: allow,
                }),
              );
              const release = {
                formatVersion: sequence === null ? 1 : 2,
                sequence,
                createdAt: '',
                expiresAt: null,
              } as const;
              const theirs = outcome(() =>
                checkFreshness(release, sha, floor, {
                  newest: newest === undefined ? undefined : { sequence: newest, contentSha256: newestSha },
                  allowSequence: allow,
                }),
              );
              expect({ sequence, floor, newest, same: newestSha === sha, allow, verdict: ours }).toEqual({
                sequence,
                floor,
                newest,
                same: newestSha === sha,
                allow,
                verdict: theirs,
              });
              compared++;
            }
    expect(compared).toBeGreaterThan(100);
  }, 30_000);

  it('S173 a start that allowed a downgrade does not lower a newer bootstrap another agent remembered meanwhile', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    await accept(signedFile(dir, 20, bytesOf('twenty')), options({ dataDir }));
    // This start checks against 20 and allows 19; before it succeeds, another agent on the data directory accepts 25.
    const loaded = await loadBootstrap(
      signedFile(dir, 19),
      agentKey,
      undefined,
      options({ dataDir, allowDowngradeTo: 19 }),
    );
    expect(loaded.trust.rollback?.verdict).toBe('allowed-downgrade');
    await accept(signedFile(dir, 25, bytesOf('twenty-five')), options({ dataDir }));
    rememberBootstrapRelease(loaded.trust.rollback);
    expect(releaseStore(dataDir).newestBootstrap()?.sequence).toBe(25);
  }, 30_000);

  it('reports an unchecked bootstrap as such, without a verdict', async () => {
    const dir = tempDir();
    const loaded = await loadBootstrap(signedFile(dir, 3), undefined);
    expect(loaded.trust.rollback).toBeUndefined();
    const { line, warning } = bootstrapReport('file', loaded.trust);
    expect(line.fields).toMatchObject({
      signature: 'signed, not checked',
      rollback: 'not checked (no administrator keys)',
    });
    expect(line.fields['verdict']).toBeUndefined();
    expect(warning).toBeUndefined();
  }, 30_000);
});
