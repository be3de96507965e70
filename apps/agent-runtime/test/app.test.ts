import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encrypted, makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, until, type RunningAgent } from './agent-helpers.js';

const keys = makeKeys();
const dir = tempDir();

const timed = {
  workflows: [
    {
      name: 'timed',
      steps: [
        {
          stepId: 'once',
          trigger: { runOnce: true },
          resultsProcessor: { script: "context.diagnosticLog('ran once')" },
        },
        {
          stepId: 'tick',
          trigger: { timer: { period: 50, delay: 10 } },
          resultsProcessor: { script: "context.diagnosticLog('tick ' + context.counter('ticks', 1))" },
        },
        {
          stepId: 'ask',
          trigger: { http: { server: 'api', method: 'GET', path: '/ask' } },
          resultsProcessor: { script: "context.setBody(context.sendToStep('answer', 'q').getBody())" },
        },
        {
          stepId: 'answer',
          resultsProcessor: { script: "context.setBody(context.getPassedMessageAsString() + ':a')" },
        },
        {
          stepId: 'restricted',
          trigger: { http: { server: 'api', method: 'GET', path: '/restricted' } },
          authenticationProcessor: { script: "context.getRestrictedDataFromHost('idp')" },
          resultsProcessor: { script: "context.setBody('unreachable')" },
        },
      ],
    },
  ],
};

const second = {
  workflows: [
    {
      name: 'second',
      steps: [
        {
          stepId: 'hello',
          trigger: { http: { server: 'web', method: 'GET', path: '/hello' } },
          resultsProcessor: { script: "context.setBody('hello from ' + context.getData('region'))" },
        },
      ],
    },
  ],
};

let a: RunningAgent;

beforeAll(async () => {
  const other = makeKeys();
  a = await startAgent(keys, [
    makeRecord(keys, writePackage(dir, keys, { workflow: timed }), {
      allowExternalHostAccess: [
        {
          id: 'idp',
          host: 'http://127.0.0.1:9/',
          authenticationHost: 'true',
          data: { token: encrypted(other, 'not-for-this-agent') },
        },
      ],
    }),
    makeRecord(keys, writePackage(dir, keys, { workflow: second }), {
      deploymentId: 'dep-2',
      allowHttpServerAccess: [{ id: 'web', port: 18081 }],
      data: { region: 'eu-1' },
    }),
  ]);
});
afterAll(() => a.close());

const logs = () => a.lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('createApp', () => {
  it('runs runOnce once and timer triggers repeatedly', async () => {
    // The runOnce run and the timer runs go on concurrently: under load 'tick 3' can come first.
    const seen = (msg: string) => logs().some((l) => l['msg'] === msg);
    await until(() => seen('tick 3') && seen('ran once'), 10_000);
    expect(logs().filter((l) => l['msg'] === 'ran once')).toHaveLength(1);
  });

  it('writes no start-up warning for the trigger kinds it runs (every kind of docs/interfaces.md §4.4)', () => {
    expect(logs().filter((l) => l['msg'] === 'unsupported feature' && l['kind'] === 'trigger')).toEqual([]);
  });

  it('runs a step without trigger through sendToStep', async () => {
    expect(await (await fetch(`${a.url('api')}/ask`)).text()).toBe('q:a');
  });

  it('runs two deployment records side by side, each with its own server and data', async () => {
    expect(a.listening.map((l) => `${l.deploymentId}/${l.id}`).sort()).toEqual(['dep-1/api', 'dep-2/web']);
    expect(await (await fetch(`${a.url('web')}/hello`)).text()).toBe('hello from eu-1');
    expect((await fetch(`${a.url('web')}/ask`)).status).toBe(404);
  });

  it('fails a -2/ string no candidate opens at the call, naming host and field, and keeps running (S46)', async () => {
    const res = await fetch(`${a.url('api')}/restricted`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { code: string }).code).toBe('AGENT_STEP_FAILED');
    const warn = logs().find((l) => l['stepId'] === 'restricted' && l['msg'] === 'step errored');
    expect(String(warn?.['errors'])).toContain('AGENT_RESTRICTED_DATA_FAILED');
    expect(String(warn?.['errors'])).toContain('"idp", field "/token"');
    expect(a.lines.join('')).not.toContain('not-for-this-agent');
    expect(await (await fetch(`${a.url('api')}/ask`)).text()).toBe('q:a');
  });
});
