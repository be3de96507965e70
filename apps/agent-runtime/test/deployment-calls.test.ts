import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, until, type RunningAgent } from './agent-helpers.js';

// Two packaged deployments in one agent: calls between them (ADR 0079) and a tcp trigger (ADR 0080).
const keys = makeKeys();
const dir = tempDir();

const shop = {
  workflows: [
    {
      name: 'shop',
      steps: [
        {
          stepId: 'checkout',
          trigger: { http: { server: 'api', method: 'POST', path: '/checkout' } },
          resultsProcessor: {
            script:
              "const r = context.sendToStep('billing', 'charge', context.getBody()); context.setProperty('status_code', r.isErrored() ? '502' : '200'); context.setBody(r.isErrored() ? r.getAllErrors().join() : r.getBody());",
          },
        },
        {
          stepId: 'stock',
          trigger: { http: { server: 'api', method: 'GET', path: '/stock' } },
          urlGenerator: { script: "context.setUrl('billing-internal', '/ledger')" },
          resultsProcessor: { script: "context.setBody('ledger: ' + context.getBody())" },
        },
      ],
    },
  ],
};

const billing = {
  workflows: [
    {
      name: 'billing',
      steps: [
        {
          stepId: 'charge',
          trigger: { deploymentAccess: { ids: ['from-shop'] } },
          resultsProcessor: {
            script:
              "const o = JSON.parse(context.getBody()); context.setBody('charged ' + o.amount + ' for ' + context.getProperty('deploymentAccess.deploymentId'));",
          },
        },
        {
          stepId: 'ledger',
          trigger: { http: { server: 'internal', method: 'GET', path: '/ledger' } },
          resultsProcessor: { script: "context.setBody('3 entries')" },
        },
        {
          stepId: 'events',
          trigger: { tcp: { server: 'events', delimiter: '\n', stripDelimiter: true } },
          resultsProcessor: { script: "console.log('event ' + JSON.parse(context.getBody())[0].message)" },
        },
      ],
    },
  ],
};

let a: RunningAgent;

beforeAll(async () => {
  const pkg = (id: string, workflow: object) => writePackage(dir, keys, { packageId: id, workflow });
  const record = (id: string, packageId: string, path: string, extra: Record<string, unknown>) => {
    const r = makeRecord(keys, path, extra);
    return { ...r, deploymentId: id, packaging: { ...r.packaging, packageId } };
  };
  a = await startAgent(keys, [
    record('shop', 'shop-app', pkg('shop-app', shop), {
      allowDeploymentAccess: [{ id: 'billing', access: 'call', deploymentIds: ['billing'] }],
      allowExternalHostAccess: [
        {
          id: 'billing-internal',
          transport: 'inProc',
          inProcServerId: 'internal',
          inProcDeploymentId: 'billing',
          allowList: [{ method: 'GET', uriPattern: '/ledger' }],
        },
      ],
    }),
    record('billing', 'billing-app', pkg('billing-app', billing), {
      startupPriority: -1,
      allowDeploymentAccess: [{ id: 'from-shop', access: 'receive', deploymentIds: ['shop'] }],
      allowHttpServerAccess: [
        { id: 'internal', inProcOnly: true },
        { id: 'events', port: 18099, tcp: true },
      ],
    }),
  ]);
});
afterAll(() => a.close());

const parsed = () => a.lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('deployments of one agent', () => {
  it('start in startupPriority order and open no listener for an inProcOnly server', () => {
    const loaded = parsed().filter((l) => l['msg'] === 'deployment loaded');
    expect(loaded.map((l) => l['deploymentId'])).toEqual(['billing', 'shop']);
    expect(a.listening.map((l) => `${l.deploymentId}/${l.id}`).sort()).toEqual([
      'billing/events',
      'shop/api',
    ]);
    expect(parsed().filter((l) => l['msg'] === 'unsupported feature')).toEqual([]);
  });

  it('call each other through what both granted: sendToStep across deployments and an inProc host', async () => {
    const res = await fetch(`${a.url('api', 'shop')}/checkout`, {
      method: 'POST',
      body: '{"amount":7}',
      headers: { 'content-type': 'application/json' },
    });
    expect([res.status, await res.text()]).toEqual([200, 'charged 7 for shop']);
    expect(await (await fetch(`${a.url('api', 'shop')}/stock`)).text()).toBe('ledger: 3 entries');
  });

  it('run a tcp trigger per message', async () => {
    const port = a.listening.find((l) => l.id === 'events')!.port;
    await new Promise<void>((resolve) => {
      const s = connect(port, '127.0.0.1', () => s.end('paid\nshipped\n'));
      s.on('close', () => resolve());
      s.resume();
    });
    const events = () => parsed().filter((l) => String(l['msg']).startsWith('event '));
    await until(() => events().length === 2);
    expect(events().map((l) => l['msg'])).toEqual(['event paid', 'event shipped']);
  });
});
