import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/startup/config.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

const keys = makeKeys();
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

function counterWorkflow(file = 'counter.store', extra: Record<string, unknown> = {}): object {
  return {
    workflows: [
      {
        name: 'persist',
        steps: [
          {
            stepId: 'count',
            persistenceFile: file,
            ...extra,
            trigger: { http: { server: 'api', method: 'POST', path: '/count' } },
            resultsProcessor: {
              script: `const n = Number(context.getPersistedItem('n') || '0') + 1;
                context.setPersistedItem('n', String(n));
                context.queue().push('run ' + n);
                context.getTimestampManager().setIfLastest('last', n);
                context.setBody(JSON.stringify({ n, queued: context.queue().size(), last: context.getTimestampManager().get('last') }));`,
            },
          },
        ],
      },
    ],
  };
}

let running: RunningAgent | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function post(agent: RunningAgent, deploymentId = 'dep-1'): Promise<unknown> {
  const res = await fetch(`${agent.url('api', deploymentId)}/count`, { method: 'POST' });
  expect(res.status).toBe(200);
  return res.json();
}

function startError(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  return p.then(
    () => ({ message: 'started' }),
    (e: unknown) => e as { code?: string; message: string },
  );
}

describe('step persistence in the agent', () => {
  // 1.2 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'a persistence app keeps its store across a restart (two createApp lifetimes on one data dir)',
    { timeout: 10_000 },
    async () => {
      const dir = tempDir();
      const dataDir = join(dir, 'data');
      const pkg = writePackage(dir, keys, { workflow: counterWorkflow() });
      const records = [makeRecord(keys, pkg, { persistenceRoot: 'dep-1' })];
      running = await startAgent(keys, records, { dataDir });
      expect(await post(running)).toEqual({ n: 1, queued: 1, last: 1 });
      expect(await post(running)).toEqual({ n: 2, queued: 2, last: 2 });
      await running.close();
      running = await startAgent(keys, records, { dataDir });
      expect(await post(running)).toEqual({ n: 3, queued: 3, last: 3 });
      expect(readdirSync(join(dataDir, 'dep-1')).sort()).toEqual(['counter.store', 'counter.store-lock']);
    },
  );

  it.each([
    ['../escape.store', undefined],
    ['/tmp/absolute.store', undefined],
    ['ok.store', '../outside'],
    ['ok.store', '/abs-root'],
  ])(
    'S126: persistenceFile %j under persistenceRoot %j is refused at deploy time naming the step; nothing created',
    async (file, persistenceRoot) => {
      const dir = tempDir();
      const dataDir = join(dir, 'data');
      const pkg = writePackage(dir, keys, { workflow: counterWorkflow(file) });
      const err = await startError(
        startAgent(keys, [makeRecord(keys, pkg, persistenceRoot ? { persistenceRoot } : {})], { dataDir }),
      );
      expect(err.code).toBe('ENGINE_PERSISTENCE_INVALID');
      expect(err.message).toContain('dep-1');
      if (persistenceRoot === undefined) expect(err.message).toContain('"count"');
      expect(existsSync(dataDir)).toBe(false);
      expect(readdirSync(dir).filter((f) => !f.endsWith('.oapp'))).toEqual([]);
    },
  );

  it('S129: two deployments naming the same persistence file are refused at deploy time; nothing created', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const pkg = writePackage(dir, keys, { workflow: counterWorkflow() });
    const err = await startError(
      startAgent(keys, [makeRecord(keys, pkg), makeRecord(keys, pkg, { deploymentId: 'dep-2' })], {
        dataDir,
      }),
    );
    expect(err.code).toBe('AGENT_PERSISTENCE_CONFLICT');
    expect(err.message).toContain('dep-1');
    expect(err.message).toContain('dep-2');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('S129: with their own persistenceRoot the same file name is isolated per deployment', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const pkg = writePackage(dir, keys, { workflow: counterWorkflow() });
    running = await startAgent(
      keys,
      [
        makeRecord(keys, pkg, { persistenceRoot: 'one' }),
        makeRecord(keys, pkg, { deploymentId: 'dep-2', persistenceRoot: 'two' }),
      ],
      { dataDir },
    );
    expect(await post(running, 'dep-1')).toMatchObject({ n: 1 });
    expect(await post(running, 'dep-1')).toMatchObject({ n: 2 });
    expect(await post(running, 'dep-2')).toMatchObject({ n: 1 });
  });

  it('S128: a corrupt store file stops start-up with ENGINE_PERSISTENCE_CORRUPT and is left as it was', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'counter.store'), randomBytes(10_000));
    const before = sha(join(dataDir, 'counter.store'));
    const pkg = writePackage(dir, keys, { workflow: counterWorkflow() });
    const err = await startError(startAgent(keys, [makeRecord(keys, pkg)], { dataDir }));
    expect(err.code).toBe('ENGINE_PERSISTENCE_CORRUPT');
    expect(sha(join(dataDir, 'counter.store'))).toBe(before);
  });

  it('S131: a wrong hexSymmetricKey at restart stops start-up with ENGINE_PERSISTENCE_KEY; the store is unchanged', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    // A later release of the package (issue 29: the agent refuses a reused or older sequence first).
    const withKey = (k: string, sequence: number) =>
      writePackage(dir, keys, {
        sequence,
        workflow: counterWorkflow(undefined, {
          persistence: { persistenceFile: 'enc.store', hexSymmetricKey: k },
        }),
      });
    running = await startAgent(keys, [makeRecord(keys, withKey('11'.repeat(32), 1))], { dataDir });
    expect(await post(running)).toMatchObject({ n: 1 });
    await running.close();
    running = undefined;
    const before = sha(join(dataDir, 'enc.store'));
    const err = await startError(
      startAgent(keys, [makeRecord(keys, withKey('22'.repeat(32), 2))], { dataDir }),
    );
    expect(err.code).toBe('ENGINE_PERSISTENCE_KEY');
    expect(err.message).not.toContain('22'.repeat(32));
    expect(sha(join(dataDir, 'enc.store'))).toBe(before);
  });

  it('refuses a deployment with persistence when no data directory is configured', async () => {
    const dir = tempDir();
    const pkg = writePackage(dir, keys, { workflow: counterWorkflow() });
    const err = await startError(startAgent(keys, [makeRecord(keys, pkg)]));
    expect(err.code).toBe('AGENT_PERSISTENCE_CONFLICT');
  });
});

describe('AGENT_DATA_DIR', () => {
  it('defaults to ./agent-data in the working directory and resolves relative values', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'b.json' }).dataDir).toBe(join(process.cwd(), 'agent-data'));
    expect(loadConfig({ AGENT_BOOTSTRAP: 'b.json', AGENT_DATA_DIR: 'x/y' }).dataDir).toBe(
      join(process.cwd(), 'x/y'),
    );
    expect(loadConfig({ AGENT_BOOTSTRAP: 'b.json', AGENT_DATA_DIR: '/var/lib/agent' }).dataDir).toBe(
      '/var/lib/agent',
    );
  });
});

describe('authentication contexts persist sealed values (ADR 0130, issue 28)', () => {
  const TOKEN = 'tok-4d1b9e-cached-login';
  const workflow = {
    workflows: [
      {
        name: 'auth-cache',
        steps: [
          {
            stepId: 'login',
            type: 'scripted-auth',
            persistenceFile: 'auth.store',
            trigger: { http: { server: 'api', method: 'POST', path: '/login' } },
            resultsProcessor: {
              script: `const cached = context.getPersistedItem('token');
                if (cached === null) context.setPersistedItem('token', '${TOKEN}');
                context.setBody(cached === null ? 'stored' : 'cached');`,
            },
          },
          {
            stepId: 'peek',
            persistenceFile: 'auth.store',
            trigger: { http: { server: 'api', method: 'POST', path: '/count' } },
            resultsProcessor: { script: "context.setBody(String(context.getPersistedItem('token')));" },
          },
        ],
      },
    ],
  };

  // Two agent starts on one data directory: ≈ 1 s on a quiet machine.
  it(
    'a scripted-auth step caches a token across a restart, sealed with a key derived from AGENT_STRING_SECRETKEYS',
    { timeout: 30_000 },
    async () => {
      const dir = tempDir();
      const dataDir = join(dir, 'data');
      const pkg = writePackage(dir, keys, { workflow });
      const records = [makeRecord(keys, pkg, { persistenceRoot: 'dep-1' })];
      const call = async (path: string): Promise<string> => {
        const res = await fetch(`${running!.url('api', 'dep-1')}${path}`, { method: 'POST' });
        expect(res.status).toBe(200);
        return res.text();
      };
      running = await startAgent(keys, records, { dataDir });
      expect(await call('/login')).toBe('stored');
      expect(await call('/login')).toBe('cached');
      expect(await call('/count')).toBe('null'); // an ordinary processor does not see it
      await running.close();
      expect(readFileSync(join(dataDir, 'dep-1', 'auth.store')).includes(Buffer.from(TOKEN))).toBe(false);
      running = await startAgent(keys, records, { dataDir });
      expect(await call('/login')).toBe('cached');
      expect(running.lines.join('\n')).not.toContain(TOKEN);
    },
  );
});
