import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseFileOf, RELEASES_DIR } from '../src/startup/release-store.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import {
  echoWorkflow,
  makeKeys,
  makeRecord,
  tempDir,
  writePackage,
  type PackageOptions,
} from './fixtures.js';

const keys = makeKeys();
let running: RunningAgent | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function startError(p: Promise<RunningAgent>): Promise<{ code: string; message: string }> {
  try {
    running = await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('started');
}

/** Starts the agent on one package (`dep-1`, package id echo-app), with the given packaging additions. */
async function start(
  dir: string,
  pkg: PackageOptions,
  o: { dataDir?: string; packaging?: Record<string, unknown>; lines?: string[] } = {},
): Promise<RunningAgent> {
  const record = makeRecord(keys, writePackage(dir, keys, pkg));
  const packaging = { ...record.packaging, ...o.packaging };
  const agent = await startAgent(keys, [{ ...record, packaging }], { dataDir: o.dataDir });
  o.lines?.push(...agent.lines);
  return agent;
}

/** A different workflow: other content under the same package id. */
const otherWorkflow = echoWorkflow([
  { stepId: 'extra', resultsProcessor: { script: "context.setBody('x')" } },
]);

function lineOf(lines: readonly string[], msg: string): Record<string, unknown> | undefined {
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === msg);
}

function remembered(dataDir: string): { sequence: number; contentSha256: string } {
  const dir = join(dataDir, RELEASES_DIR);
  return JSON.parse(readFileSync(releaseFileOf(dir, 'echo-app'), 'utf8')) as {
    sequence: number;
    contentSha256: string;
  };
}

describe('S169: rollback to an older release of a package id', () => {
  it('S169 refuses a validly signed lower sequence after a restart with POLICY_ROLLBACK naming the deployment', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    running = await start(dir, { sequence: 20 }, { dataDir });
    expect(lineOf(running.lines, 'package release')).toMatchObject({
      deploymentId: 'dep-1',
      packageId: 'echo-app',
      formatVersion: 2,
      sequence: 20,
      verdict: 'first',
      rollback: 'no floor set, remembered newest 20',
    });
    expect(remembered(dataDir).sequence).toBe(20);
    await running.close();
    running = undefined;
    const e = await startError(start(dir, { sequence: 19 }, { dataDir }));
    expect(e.code).toBe('POLICY_ROLLBACK');
    expect(e.message).toContain('deployment "dep-1"');
    expect(e.message).toContain('19');
    expect(e.message).toContain('20');
    // A v1 package (no sequence) is refused once a v2 release was accepted.
    expect((await startError(start(dir, { formatVersion: 1 }, { dataDir }))).code).toBe('POLICY_ROLLBACK');
    expect(remembered(dataDir).sequence).toBe(20);
  }, 30_000);

  it('S169 refuses the same sequence with other content with POLICY_SEQUENCE_REUSED; the same package again starts', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const path = writePackage(dir, keys, { sequence: 7 });
    running = await startAgent(keys, [makeRecord(keys, path)], { dataDir });
    await running.close();
    running = undefined;
    const e = await startError(start(dir, { sequence: 7, workflow: otherWorkflow }, { dataDir }));
    expect(e.code).toBe('POLICY_SEQUENCE_REUSED');
    expect(e.message).toContain('deployment "dep-1"');
    running = await startAgent(keys, [makeRecord(keys, path)], { dataDir });
    expect(lineOf(running.lines, 'package release')).toMatchObject({ sequence: 7, verdict: 'same' });
    // A newer one is accepted and remembered.
    await running.close();
    running = await start(dir, { sequence: 8, workflow: otherWorkflow }, { dataDir });
    expect(lineOf(running.lines, 'package release')).toMatchObject({ sequence: 8, verdict: 'newer' });
    expect(remembered(dataDir).sequence).toBe(8);
  }, 30_000);

  it('S169 with a data directory, two records of one package id on different releases are refused in any order', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const older = makeRecord(keys, writePackage(dir, keys, { sequence: 3 }), { deploymentId: 'old' });
    const newer = makeRecord(keys, writePackage(dir, keys, { sequence: 4 }), { deploymentId: 'new' });
    for (const records of [
      [older, newer],
      [newer, older],
    ]) {
      const e = await startError(startAgent(keys, records, { dataDir }));
      expect(e.code).toBe('POLICY_ROLLBACK');
      expect(e.message).toContain('deployment "old"');
    }
    // Refused start-ups remember nothing.
    expect(existsSync(join(dataDir, RELEASES_DIR))).toBe(false);
  }, 30_000);

  it('refuses a remembered-state file it cannot read rather than forget it (AGENT_RELEASE_STATE_UNREADABLE)', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    running = await start(dir, { sequence: 5 }, { dataDir });
    await running.close();
    running = undefined;
    writeFileSync(releaseFileOf(join(dataDir, RELEASES_DIR), 'echo-app'), '{"truncated":');
    const e = await startError(start(dir, { sequence: 6 }, { dataDir }));
    expect(e.code).toBe('AGENT_RELEASE_STATE_UNREADABLE');
  }, 30_000);
});

describe('S170: the floor, packaging.minimumSequence', () => {
  it('S170 refuses a package below minimumSequence with no data directory, and with one that cannot be written', async () => {
    const dir = tempDir();
    const notADirectory = join(dir, 'file');
    writeFileSync(notADirectory, '');
    for (const dataDir of [undefined, notADirectory]) {
      const e = await startError(
        start(dir, { sequence: 9 }, { dataDir, packaging: { minimumSequence: 10 } }),
      );
      expect(e.code).toBe('POLICY_BELOW_MINIMUM');
      expect(e.message).toContain('deployment "dep-1"');
      expect(e.message).toContain('minimumSequence 10');
    }
    // A v1 package has no sequence: refused whenever a floor is set.
    const v1 = await startError(start(dir, { formatVersion: 1 }, { packaging: { minimumSequence: 0 } }));
    expect(v1.code).toBe('POLICY_BELOW_MINIMUM');
  }, 30_000);

  it('S170 accepts the floor itself without a data directory and reports that rollback is checked against the floor only', async () => {
    const dir = tempDir();
    running = await start(dir, { sequence: 10 }, { packaging: { minimumSequence: 10 } });
    expect(lineOf(running.lines, 'package release')).toMatchObject({
      sequence: 10,
      verdict: 'first',
      rollback: 'no data directory: floor only (floor 10)',
    });
  }, 30_000);

  it('an accepted package whose newest release cannot be remembered stops start-up (AGENT_RELEASE_STATE_UNWRITABLE)', async () => {
    const dir = tempDir();
    const notADirectory = join(dir, 'file');
    writeFileSync(notADirectory, '');
    const e = await startError(start(dir, { sequence: 11 }, { dataDir: notADirectory }));
    expect(e.code).toBe('AGENT_RELEASE_STATE_UNWRITABLE');
    expect(e.message).toContain('deployment "dep-1"');
  }, 30_000);
});

describe('S172: expired packages', () => {
  const hour = 3_600_000;

  it('S172 refuses a package past expiresAt plus the skew with POLICY_EXPIRED', async () => {
    const dir = tempDir();
    const now = Date.now();
    const createdAt = new Date(now - hour);
    // 400 s past: beyond the default 300 s of skew.
    const e = await startError(start(dir, { createdAt, expiresAt: new Date(now - 400_000) }));
    expect(e.code).toBe('POLICY_EXPIRED');
    expect(e.message).toContain('deployment "dep-1"');
    // 100 s past, with the skew set to 60 s.
    const e2 = await startError(
      start(dir, { createdAt, expiresAt: new Date(now - 100_000) }, { packaging: { clockSkewSeconds: 60 } }),
    );
    expect(e2.code).toBe('POLICY_EXPIRED');
  }, 30_000);

  it('S172 accepts a package past expiresAt by less than the skew, and one not expired', async () => {
    const dir = tempDir();
    const now = Date.now();
    const createdAt = new Date(now - hour);
    running = await start(dir, { createdAt, expiresAt: new Date(now - 100_000) });
    const expiresAt = new Date(now - 100_000).toISOString();
    expect(lineOf(running.lines, 'package release')).toMatchObject({ expiresAt });
    await running.close();
    running = await start(
      dir,
      { createdAt, expiresAt: new Date(now - 400_000) },
      { packaging: { clockSkewSeconds: 600 } },
    );
    await running.close();
    running = await start(dir, { createdAt, expiresAt: new Date(now + hour) });
  }, 30_000);
});

describe('packaging.allowDowngradeTo', () => {
  it('accepts exactly that older sequence with a warning, reports it, and remembers it as the newest', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    running = await start(dir, { sequence: 30 }, { dataDir });
    await running.close();
    running = undefined;
    // Another older sequence is still refused.
    const e = await startError(
      start(dir, { sequence: 28 }, { dataDir, packaging: { allowDowngradeTo: 29 } }),
    );
    expect(e.code).toBe('POLICY_ROLLBACK');
    running = await start(dir, { sequence: 29 }, { dataDir, packaging: { allowDowngradeTo: 29 } });
    const warning = lineOf(running.lines, 'deliberate downgrade');
    expect(warning).toMatchObject({
      level: 'warn',
      deploymentId: 'dep-1',
      packageId: 'echo-app',
      sequence: 29,
      newestBefore: 30,
    });
    expect(lineOf(running.lines, 'package release')).toMatchObject({
      sequence: 29,
      verdict: 'allowed-downgrade',
      allowDowngradeTo: 29,
      rollback: 'no floor set, remembered newest 29',
    });
    expect(remembered(dataDir).sequence).toBe(29);
    await running.close();
    running = undefined;
    // The floor holds even for the downgrade: allowDowngradeTo below minimumSequence is a policy error.
    const below = await startError(
      start(dir, { sequence: 29 }, { dataDir, packaging: { allowDowngradeTo: 29, minimumSequence: 30 } }),
    );
    expect(below.code).toBe('POLICY_INVALID');
    // Sequence 30 is newer than the remembered 29 again.
    running = await start(dir, { sequence: 30 }, { dataDir });
    expect(lineOf(running.lines, 'package release')).toMatchObject({ verdict: 'newer' });
  }, 30_000);
});
