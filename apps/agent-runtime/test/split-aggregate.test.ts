import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPLIT_CONCURRENCY } from '@org/workflow-engine';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';

const keys = makeKeys();

/** An HTTP trigger gets `{ ids: [...] }`; each id is fetched from host `items`; the response aggregates them. */
const workflow = {
  workflows: [
    {
      name: 'lookup',
      steps: [
        {
          stepId: 'lookup',
          type: 'scripted-split-aggregate',
          trigger: { http: { server: 'api', method: 'POST', path: '/lookup' } },
          splitGenerator: {
            script: 'JSON.parse(context.getBody()).ids.forEach((id) => context.addSplitReturnItem(id));',
          },
          urlGenerator: {
            script: "context.setHttpMethod('GET'); context.setUrl('items', 'v1/items/' + context.getBody());",
          },
          itemResultProcessor: {
            script:
              "const r = JSON.parse(context.getBody()); context.setBody(JSON.stringify({ id: r.id, name: r.name, status: Number(context.getProperty('status_code')) }));",
          },
          resultsProcessor: {
            script:
              "const all = JSON.parse(context.getBody()); context.setHeader('Content-Type', 'application/json'); context.setBody(JSON.stringify({ count: all.length, items: all }));",
          },
        },
      ],
    },
  ],
};

/**
 * The mock item API. It holds requests until as many are in flight as the agent may run at once (or as are
 * still to come), waits a short grace (a request beyond the bound would arrive then and raise `maxInFlight`),
 * then answers the batch in reverse order of arrival, so completion order differs from item order. A run that
 * never fills a batch is answered after a fallback delay and fails the `maxInFlight` assertion. The delays only
 * decide how surely a broken bound is caught: a correct agent passes whatever the timing.
 */
interface ItemApi {
  server: Server;
  port: number;
  seen: string[];
  maxInFlight: number;
  expect(n: number): void;
}

async function startItemApi(): Promise<ItemApi> {
  let held: (() => void)[] = [];
  let inFlight = 0;
  let remaining = 0;
  let fallback: NodeJS.Timeout | undefined;
  const release = (): void => {
    clearTimeout(fallback);
    const batch = held.reverse();
    held = [];
    remaining -= batch.length;
    for (const answer of batch) answer();
  };
  const api: ItemApi = {
    server: createServer((req, res) => {
      const id = decodeURIComponent((req.url ?? '').replace(/^\/v1\/items\//, ''));
      api.seen.push(req.url ?? '');
      inFlight++;
      api.maxInFlight = Math.max(api.maxInFlight, inFlight);
      held.push(() => {
        inFlight--;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id, name: `item ${id}` }));
      });
      // A full batch is answered after a short grace, in which a request beyond the bound would show up.
      clearTimeout(fallback);
      fallback = setTimeout(release, held.length >= Math.min(SPLIT_CONCURRENCY, remaining) ? 50 : 2000);
    }),
    port: 0,
    seen: [],
    maxInFlight: 0,
    expect(n) {
      remaining = n;
      api.seen = [];
      api.maxInFlight = 0;
    },
  };
  await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
  api.port = (api.server.address() as AddressInfo).port;
  return api;
}

let a: RunningAgent;
let api: ItemApi;

beforeAll(async () => {
  api = await startItemApi();
  a = await startAgent(
    keys,
    [
      makeRecord(keys, writePackage(tempDir(), keys, { workflow }), {
        allowExternalHostAccess: [
          {
            id: 'items',
            host: `http://127.0.0.1:${api.port}/`,
            allowList: [{ method: 'GET', uriPattern: '/v1/items/[a-z0-9-]+' }],
          },
        ],
      }),
    ],
    { allowPrivateNetworkHosts: ['items'] },
  );
});
afterAll(async () => {
  await a.close();
  await new Promise((r) => api.server.close(r));
});

describe('scripted-split-aggregate step in a running agent', () => {
  it('fetches every id from the item API with bounded concurrency and answers with the aggregate in order', async () => {
    const ids = Array.from({ length: 11 }, (_, i) => `id-${i}`);
    api.expect(ids.length);
    const res = await fetch(`${a.url()}/lookup`, { method: 'POST', body: JSON.stringify({ ids }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({
      count: ids.length,
      items: ids.map((id) => ({ id, name: `item ${id}`, status: 200 })),
    });
    expect([...api.seen].sort()).toEqual(ids.map((id) => `/v1/items/${id}`).sort());
    expect(api.maxInFlight).toBe(SPLIT_CONCURRENCY);
  });

  it('answers an empty list without calling the API', async () => {
    api.expect(0);
    const res = await fetch(`${a.url()}/lookup`, { method: 'POST', body: JSON.stringify({ ids: [] }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ count: 0, items: [] });
    expect(api.seen).toEqual([]);
  });

  it('fails the request when the policy refuses one item call, and logs which item', async () => {
    api.expect(2);
    const res = await fetch(`${a.url()}/lookup`, {
      method: 'POST',
      body: JSON.stringify({ ids: ['ok-1', 'NOT_ALLOWED', 'ok-2'] }),
    });
    expect(res.status).toBe(500);
    expect(api.seen).not.toContain('/v1/items/NOT_ALLOWED');
    const logged = a.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['stepId'] === 'lookup' && l['errors'] !== undefined);
    expect(String(logged?.['errors'])).toContain('item 1: POLICY_PATH_NOT_ALLOWED');
  });
});
