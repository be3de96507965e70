import { afterEach, describe, expect, it } from 'vitest';
import { MAX_IN_PROC_IN_FLIGHT } from '../src/deployments/registry.js';
import { DEFAULT_LIMITS } from '../src/index.js';
import { closeRuntimes, startRuntime, step, wf, type TestDeployment } from './helpers.js';

// Outbound `transport: "inProc"` (docs/interfaces.md §3.3): a trigger server of this runtime, no network port.
afterEach(closeRuntimes);

/** `api`: an inProcOnly server `internal` (GET /orders, /big) and a network server `public` (GET /who). */
const api: TestDeployment = {
  id: 'api',
  workflow: wf(
    step(
      'orders',
      "console.log('orders ran'); context.setProperty('status_code', '200'); context.setBody('orders for ' + context.getProperty('http.inProcDeploymentId'))",
      { http: { server: 'internal', method: 'GET', path: '/orders' } },
    ),
    step('big', "context.setBody('x'.repeat(5000))", {
      http: { server: 'internal', method: 'GET', path: '/big' },
    }),
    step('who', "context.setBody(String(context.getProperty('http.inProcDeploymentId')))", {
      http: { server: 'public', method: 'GET', path: '/who' },
    }),
    {
      stepId: 'self',
      urlGenerator: { script: "context.setUrl('self', '/orders')" },
      resultsProcessor: {
        script: "context.setBody(context.getProperty('status_code') + ' ' + context.getBody())",
      },
    },
  ),
  record: {
    allowHttpServerAccess: [
      { id: 'internal', inProcOnly: true },
      { id: 'public', port: 18091 },
    ],
    allowExternalHostAccess: [
      {
        id: 'self',
        transport: 'inProc',
        inProcServerId: 'internal',
        allowList: [{ method: 'GET', uriPattern: '/orders' }],
      },
    ],
    allowDeploymentAccess: [{ id: 'from-front', access: 'receive', deploymentIds: ['front'] }],
  },
};

/** A deployment calling `api`'s server `server` in process: one step per path. */
const client = (id: string, server: string, paths: string[]): TestDeployment => ({
  id,
  workflow: wf(
    ...paths.map((p) => ({
      stepId: `get${p.replace(/\W/g, '-')}`,
      urlGenerator: { script: `context.setUrl('api', '${p}')` },
      resultsProcessor: {
        script:
          "context.sendMetric('after', 1); context.setBody(context.getProperty('status_code') + ' ' + context.getBody())",
      },
    })),
  ),
  record: {
    allowExternalHostAccess: [
      {
        id: 'api',
        transport: 'inProc',
        inProcServerId: server,
        inProcDeploymentId: 'api',
        allowList: [{ method: 'GET', uriPattern: '/(orders|big|who)' }],
      },
    ],
  },
});

const ordersRuns = (t: Awaited<ReturnType<typeof startRuntime>>) =>
  t.runtime.stepCounters().find((c) => c.deploymentId === 'api' && c.stepId === 'orders')?.httpRuns ?? 0;

describe('inProc outbound calls', () => {
  it('reach an inProcOnly server of the same deployment through the same trigger handler; it never listens', async () => {
    const t = await startRuntime([api]);
    expect(t.listening.map((l) => l.id)).toEqual(['public']);
    const r = await t.runtime.triggerStep('api', 'self');
    expect([r?.errored, r?.body]).toEqual([false, '200 orders for api']);
  });

  it('reach another deployment that receives calls from the caller; the callee sees who called', async () => {
    const t = await startRuntime([api, client('front', 'internal', ['/orders', '/other'])]);
    expect((await t.runtime.triggerStep('front', 'get-orders'))?.body).toBe('200 orders for front');
    // The host policy still decides first: a path outside the allowList never reaches the server.
    const refused = await t.runtime.triggerStep('front', 'get-other');
    expect(refused?.errors.join()).toContain('POLICY_PATH_NOT_ALLOWED');
    expect(ordersRuns(t)).toBe(1);
  });

  it('S149 refuses a call to a server of a deployment that does not receive from the caller; nothing runs', async () => {
    const t = await startRuntime([api, client('rogue', 'internal', ['/orders'])]);
    const r = await t.runtime.triggerStep('rogue', 'get-orders');
    expect(r?.errored).toBe(true);
    expect(r?.errors.join()).toContain('AGENT_DEPLOYMENT_ACCESS_DENIED');
    expect(t.metrics('rogue')).toEqual([]);
    expect(t.logs('api')).toEqual([]);
    expect(ordersRuns(t)).toBe(0);
    expect(t.lines().find((l) => l['msg'] === 'in-process call refused')).toMatchObject({
      deploymentId: 'rogue',
      target: 'api',
      rule: 'receiver-grant',
    });
  });

  it('a network request cannot claim an in-process caller with a header', async () => {
    const t = await startRuntime([api, client('front', 'public', ['/who'])]);
    const res = await fetch(`http://127.0.0.1:${t.port('api', 'public')}/who`, {
      headers: { 'http.inProcDeploymentId': 'front', 'x-deployment-id': 'front' },
    });
    expect(await res.text()).toBe('null');
    expect((await t.runtime.triggerStep('front', 'get-who'))?.body).toBe('200 front');
  });

  it('an unknown server is AGENT_DEPLOYMENT_UNAVAILABLE; an oversized answer is POLICY_RESPONSE_TOO_LARGE', async () => {
    const t = await startRuntime(
      [api, client('front', 'nope', ['/orders']), client('front2', 'internal', ['/big'])].map((d) =>
        d.id === 'api'
          ? {
              ...d,
              record: {
                ...d.record,
                allowDeploymentAccess: [{ id: 'in', access: 'receive', anyDeployment: true }],
              },
            }
          : d,
      ),
      { limits: { ...DEFAULT_LIMITS, outboundResponseBytes: 1000 } },
    );
    expect((await t.runtime.triggerStep('front', 'get-orders'))?.errors.join()).toContain(
      'AGENT_DEPLOYMENT_UNAVAILABLE',
    );
    expect((await t.runtime.triggerStep('front2', 'get-big'))?.errors.join()).toContain(
      'POLICY_RESPONSE_TOO_LARGE',
    );
  });

  it('cuts off a workflow calling its own server in a loop at MAX_IN_PROC_IN_FLIGHT', async () => {
    const loop: TestDeployment = {
      id: 'loop',
      workflow: wf({
        stepId: 'again',
        trigger: { http: { server: 'internal', method: 'GET', path: '/again' } },
        urlGenerator: { script: "console.log('hop'); context.setUrl('self', '/again')" },
        resultsProcessor: { script: "context.setBody('status ' + context.getProperty('status_code'))" },
      }),
      record: {
        allowHttpServerAccess: [{ id: 'internal', inProcOnly: true }],
        allowExternalHostAccess: [
          {
            id: 'self',
            transport: 'inProc',
            inProcServerId: 'internal',
            allowList: [{ method: 'GET', uriPattern: '/again' }],
          },
        ],
      },
    };
    const t = await startRuntime([loop]);
    const r = await t.runtime.triggerStep('loop', 'again');
    expect(r?.body).toBe('status 500');
    expect(t.logs('loop')).toHaveLength(MAX_IN_PROC_IN_FLIGHT + 1);
    expect(t.lines().filter((l) => l['msg'] === 'in-process call refused')).toEqual([
      expect.objectContaining({ rule: 'in-flight', code: 'AGENT_DEPLOYMENT_UNAVAILABLE' }),
    ]);
  });
});
