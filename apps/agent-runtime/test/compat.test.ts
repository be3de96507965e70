import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

const keys = makeKeys();
const dir = tempDir();

const handle = (server: string, path: string, tag: string) => [
  {
    stepId: 'handle',
    trigger: { http: { server, method: 'GET', path } },
    resultsProcessor: { script: "context.setBody(context.sendToStep('work', '').getBody())" },
  },
  { stepId: 'work', resultsProcessor: { script: `context.setBody('${tag}')` } },
];

async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not reject');
}

describe('duplicate stepIds in different workflows (ADR 0060)', () => {
  let a: RunningAgent;

  beforeAll(async () => {
    const workflow = {
      workflows: [
        { name: 'first', steps: handle('api', '/a', 'from first') },
        { name: 'second', steps: handle('api', '/b', 'from second') },
      ],
    };
    a = await startAgent(keys, [makeRecord(keys, writePackage(dir, keys, { workflow }))]);
  });

  afterAll(() => a.close());

  it('deploys, and each trigger runs its own step, whose sendToStep resolves in its own workflow', async () => {
    expect(await (await fetch(`${a.url()}/a`)).text()).toBe('from first');
    expect(await (await fetch(`${a.url()}/b`)).text()).toBe('from second');
  });

  it('refuses two http triggers with the same server, method and path, naming both steps', async () => {
    const workflow = {
      workflows: [
        { name: 'first', steps: handle('api', '/same', 'x') },
        { name: 'second', steps: handle('api', '/same', 'y') },
      ],
    };
    const e = await rejection(startAgent(keys, [makeRecord(keys, writePackage(dir, keys, { workflow }))]));
    expect(e.code).toBe('AGENT_TRIGGER_DUPLICATE');
    expect(e.message).toContain('workflow "first"');
    expect(e.message).toContain('workflow "second"');
    expect(e.message).toContain('step "handle"');
  });

  it('refuses the same trigger twice even with different stepIds and method case', async () => {
    const workflow = {
      workflows: [
        {
          name: 'w',
          steps: [
            {
              stepId: 'one',
              trigger: { http: { server: 'api', method: 'post', path: '/p' } },
              resultsProcessor: { script: '' },
            },
            {
              stepId: 'two',
              trigger: { http: { server: 'api', method: 'POST', path: '/p' } },
              resultsProcessor: { script: '' },
            },
          ],
        },
      ],
    };
    const e = await rejection(startAgent(keys, [makeRecord(keys, writePackage(dir, keys, { workflow }))]));
    expect(e.code).toBe('AGENT_TRIGGER_DUPLICATE');
    expect(e.message).toContain('"one"');
    expect(e.message).toContain('"two"');
  });
});

describe('AGENT_SCRIPT_TIME_MS (timeouts.scriptMs)', () => {
  let a: RunningAgent;

  beforeAll(async () => {
    const workflow = {
      workflows: [
        {
          name: 'w',
          steps: [
            {
              stepId: 'spin',
              trigger: { http: { server: 'api', method: 'GET', path: '/spin' } },
              resultsProcessor: { script: 'for (;;) {}' },
            },
            {
              stepId: 'ok',
              trigger: { http: { server: 'api', method: 'GET', path: '/ok' } },
              resultsProcessor: { script: "context.setBody('ok')" },
            },
          ],
        },
      ],
    };
    a = await startAgent(keys, [makeRecord(keys, writePackage(dir, keys, { workflow }))], {
      timeouts: { scriptMs: 200 },
    });
  });

  afterAll(() => a.close());

  it('ends a script looping past the limit with ENGINE_TIMEOUT; the agent keeps answering', async () => {
    const res = await fetch(`${a.url()}/spin`);
    expect(res.status).toBe(500);
    const failed = a.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['stepId'] === 'spin');
    expect(failed).toMatchObject({ code: 'ENGINE_TIMEOUT' });
    expect(await (await fetch(`${a.url()}/ok`)).text()).toBe('ok');
  });
});
