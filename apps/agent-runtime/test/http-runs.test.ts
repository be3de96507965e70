import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';

// Each step run can be seen (ADR 0056): HTTP-triggered runs get the same debug line and counters as scheduled ones.
const keys = makeKeys();
const workflow = {
  workflows: [
    {
      name: 'runs',
      steps: [
        {
          stepId: 'ok',
          trigger: { http: { server: 'api', method: 'GET', path: '/ok' } },
          resultsProcessor: { script: "context.setBody('fine')" },
        },
        {
          stepId: 'bad',
          trigger: { http: { server: 'api', method: 'GET', path: '/bad' } },
          resultsProcessor: { script: "throw new Error('no')" },
        },
      ],
    },
  ],
};

let a: RunningAgent;

beforeAll(async () => {
  const path = writePackage(tempDir(), keys, { workflow });
  a = await startAgent(keys, [makeRecord(keys, path)], { logLevel: 'debug' });
});
afterAll(() => a.close());

describe('HTTP-triggered step runs', () => {
  it('are counted per step and each writes a debug "step run" line', async () => {
    for (const p of ['/ok', '/ok', '/bad']) await (await fetch(`${a.url()}${p}`)).text();
    const byStep = (id: string) => a.agent.stepCounters().find((c) => c.stepId === id);
    expect(byStep('ok')).toMatchObject({ runs: 2, errors: 0, httpRuns: 2, running: 0, skippedTicks: 0 });
    expect(byStep('bad')).toMatchObject({ runs: 1, errors: 1, httpRuns: 1, running: 0 });
    const runs = a.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['msg'] === 'step run' && l['trigger'] === 'http');
    expect(runs.map((l) => [l['stepId'], l['outcome'], l['level']])).toEqual([
      ['ok', 'ok', 'debug'],
      ['ok', 'ok', 'debug'],
      ['bad', 'errored', 'debug'],
    ]);
    expect(runs.every((l) => typeof l['durationMs'] === 'number')).toBe(true);
  });
});
