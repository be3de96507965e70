import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SPLIT_CONCURRENCY } from '@org/workflow-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, until, type RunningAgent } from './agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

const keys = makeKeys();

/** Review finding L4 (ADR 0069): every item calls an upstream that never answers; the step has a deadline. */
const workflow = {
  workflows: [
    {
      name: 'slow',
      steps: [
        {
          stepId: 'fan',
          type: 'scripted-split-aggregate',
          trigger: { http: { server: 'api', method: 'POST', path: '/fan' } },
          splitGenerator: {
            script: `context.setHttpMethod('GET'); context.setUrl('slow', 'v1/wait');
              JSON.parse(context.getBody()).forEach((x) => context.addSplitReturnItem(x));
              context.setBody(null);`,
          },
          resultsProcessor: { script: "context.setBody('aggregated')" },
        },
        {
          stepId: 'warm',
          trigger: { http: { server: 'api', method: 'GET', path: '/warm' } },
          resultsProcessor: { script: "context.setBody('warm')" },
        },
      ],
    },
  ],
};

let a: RunningAgent;
let slow: Server;
const requests: { closed: boolean }[] = [];

beforeAll(async () => {
  // Holds every request: only the client going away ends one.
  slow = createServer((req, res) => {
    const r = { closed: false };
    requests.push(r);
    res.on('close', () => (r.closed = true));
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  const port = (slow.address() as AddressInfo).port;
  a = await startAgent(
    keys,
    [
      makeRecord(keys, writePackage(tempDir(), keys, { workflow }), {
        allowExternalHostAccess: [
          {
            id: 'slow',
            host: `http://127.0.0.1:${port}/`,
            allowList: [{ method: 'GET', uriPattern: '/v1/wait' }],
          },
        ],
      }),
    ],
    { allowPrivateNetworkHosts: ['slow'], timeouts: { splitMs: 300 } },
  );
});
afterAll(async () => {
  await a.close();
  slow.closeAllConnections();
  await new Promise((r) => slow.close(r));
});

describe('AGENT_SPLIT_TIME_MS (timeouts.splitMs)', () => {
  it('L4: fails the split step at its deadline with ENGINE_SPLIT_DEADLINE and aborts the calls in flight', async () => {
    // Warm: the deployment's sandbox is set up, outside any deadline, before the run that meets its deadline.
    expect(await (await fetch(`${a.url()}/warm`)).text()).toBe('warm');
    const items = Array.from({ length: 10 }, (_, i) => `item-${i}`);
    const res = await fetch(`${a.url()}/fan`, { method: 'POST', body: JSON.stringify(items) });
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('aggregated');
    const logged = a.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['msg'] === 'step errored' && l['stepId'] === 'fan');
    expect(logged.map((l) => l['errors'])).toEqual([
      'ENGINE_SPLIT_DEADLINE: split step "fan" passed its deadline of 300 ms with 0 of 10 items completed',
    ]);
    // The engine's abort reaches the socket: the upstream sees each waiting call go away.
    expect(requests).toHaveLength(SPLIT_CONCURRENCY);
    await until(() => requests.every((r) => r.closed));
  });
});
