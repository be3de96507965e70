import { REDACTED } from '@org/workflow-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  encrypted,
  makeKeys,
  makeRecord,
  POLICY_CALL_STEPS,
  POLICY_REFUSALS,
  tempDir,
  writePackage,
} from './fixtures.js';
import { startAgent, startUpstream, type RunningAgent, type Upstream } from './agent-helpers.js';

const SECRET = 'client-secret-7f3a9c';
const keys = makeKeys();

const workflow = {
  workflows: [
    {
      name: 'outbound',
      steps: [
        {
          stepId: 'gateway',
          trigger: { http: { server: 'api', method: 'POST', path: '/call' } },
          resultsProcessor: {
            script:
              "const r = context.sendToStep(context.getBody(), ''); context.setBody(JSON.stringify({ errored: r.isErrored(), errors: r.getAllErrors(), body: r.getBody() }));",
          },
        },
        ...POLICY_CALL_STEPS,
        {
          stepId: 'with-auth',
          trigger: { http: { server: 'api', method: 'POST', path: '/auth' } },
          authenticationProcessor: {
            script:
              "const d = JSON.parse(context.getRestrictedDataFromHost('idp')); const t = context.callAuthenticationHost('idp', 'token', { method: 'POST', body: d.clientSecret }); console.log('token call ' + t.getStatus() + ' with ' + d.clientSecret); context.setHeader('Authorization', 'Bearer tok' + JSON.parse(t.getBody()).upstream);",
          },
          urlGenerator: { script: "context.setHttpMethod('GET'); context.setUrl('up', 'v1/users/1');" },
          resultsProcessor: {
            script: "context.sendMetric('calls', 1); context.diagnosticLog('done'); context.setBody('ok');",
          },
        },
        {
          stepId: 'metric',
          trigger: { http: { server: 'api', method: 'POST', path: '/metric' } },
          resultsProcessor: {
            script:
              "context.sendMetric(Date.now(), 'm-' + context.getBody(), 2, { region: context.getBody() }); context.setBody('ok');",
          },
        },
      ],
    },
  ],
};

let a: RunningAgent;
let up: Upstream;

beforeAll(async () => {
  up = await startUpstream();
  const base = `http://127.0.0.1:${up.port}/`;
  const path = writePackage(tempDir(), keys, { workflow });
  a = await startAgent(
    keys,
    [
      makeRecord(keys, path, {
        allowExternalHostAccess: [
          { id: 'up', host: base, allowList: [{ method: 'GET', uriPattern: '/v1/users/[0-9]+' }] },
          {
            id: 'idp',
            host: base,
            authenticationHost: true,
            allowList: [{ method: 'POST', uriPattern: '/token' }],
            data: { clientId: 'client-1', clientSecret: encrypted(keys, SECRET) },
          },
        ],
      }),
    ],
    { allowPrivateNetworkHosts: ['up', 'idp'] },
  );
});
afterAll(async () => {
  await a.close();
  await up.close();
});

async function viaGateway(stepId: string): Promise<{ errored: boolean; errors: string[]; body: string }> {
  const res = await fetch(`${a.url()}/call`, { method: 'POST', body: stepId });
  expect(res.status).toBe(200);
  return (await res.json()) as { errored: boolean; errors: string[]; body: string };
}

describe('outbound calls', () => {
  it('never decrypts at start-up or for steps without an authentication processor (S49)', async () => {
    expect(a.agent.decryptor.calls).toBe(0);
    await viaGateway('allowed');
    expect(a.agent.decryptor.calls).toBe(0);
    expect(a.lines.join('')).not.toContain(SECRET);
  });

  it('calls an allowed path on a declared host (S27)', async () => {
    const before = up.requests.length;
    const r = await viaGateway('allowed');
    expect(r.errored).toBe(false);
    expect(JSON.parse(r.body)).toEqual({ upstream: '/v1/users/42' });
    expect(up.requests.length).toBe(before + 1);
  });

  it.each(POLICY_REFUSALS)('refuses %s with %s and sends nothing (S28, S29, S42)', async (stepId, code) => {
    const before = up.requests.length;
    const r = await viaGateway(stepId);
    expect(r.errored).toBe(true);
    expect(r.errors.join(' ')).toContain(code);
    expect(up.requests.length).toBe(before);
  });

  it('decrypts restricted data in the authentication processor, sends it only to its host, never logs it (S50)', async () => {
    const before = up.requests.length;
    const res = await fetch(`${a.url()}/auth`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    expect(a.agent.decryptor.calls).toBe(1);
    const sent = up.requests.slice(before);
    expect(sent.map((r) => r.url)).toEqual(['/token', '/v1/users/1']);
    expect(sent[0]!.body).toBe(SECRET);
    expect(sent[1]!.headers['authorization']).toBe('Bearer tok/token');
    const out = a.lines.join('');
    expect(out).toContain(`token call 200 with ${REDACTED}`);
    expect(out).toContain('"type":"metric"');
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain(Buffer.from(SECRET).toString('base64'));
  });

  it('strips secrets from metric keys and dimensions (docs/interfaces.md §5.5)', async () => {
    await fetch(`${a.url()}/metric`, { method: 'POST', body: `eu${SECRET}` });
    const metric = a.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['key'] === 'm-eu');
    expect(metric).toHaveLength(1);
    expect(metric[0]!['dimensions']).toEqual({ region: 'eu' });
    expect(metric[0]!['deploymentId']).toBe('dep-1');
  });
});
