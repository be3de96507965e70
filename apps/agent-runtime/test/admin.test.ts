import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminServer, Readiness } from '../src/admin.js';
import { createAgentMetrics } from '../src/metrics.js';
import { loadConfig } from '../src/startup/config.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

// The admin listener (GET /health, /ready, /metrics) beside a real agent on port 0 calling a real upstream.

const keys = makeKeys();
const workflow = {
  workflows: [
    {
      name: 'obs',
      steps: [
        {
          stepId: 'relay',
          trigger: { http: { server: 'api', method: 'GET', path: '/relay/[0-9]+' } },
          urlGenerator: { script: "context.setUrl('up', '/ping');" },
          resultsProcessor: { script: "context.setBody('got ' + context.getBody());" },
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

const readiness = new Readiness();
const metrics = createAgentMetrics();
const seen: IncomingHttpHeaders[] = [];
let upstream: Server;
let admin: Server;
let adminUrl = '';
let a: RunningAgent;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    seen.push(req.headers);
    res.end('pong');
  });
  const upPort = await listen(upstream);
  admin = createAdminServer({ readiness, registry: metrics.registry });
  adminUrl = `http://127.0.0.1:${await listen(admin)}`;
  const path = writePackage(tempDir(), keys, { workflow });
  const hosts = [
    { id: 'up', host: `http://127.0.0.1:${upPort}/`, allowList: [{ method: 'GET', uriPattern: '/ping' }] },
  ];
  a = await startAgent(keys, [makeRecord(keys, path, { allowExternalHostAccess: hosts })], {
    allowPrivateNetworkHosts: ['up'],
    metrics: metrics.runtime,
  });
});
afterAll(async () => {
  await a.close();
  await new Promise((r) => admin.close(r));
  await new Promise((r) => upstream.close(r));
});

describe('admin listener', () => {
  it('answers /health always and /ready with 503 until ready and while draining', async () => {
    expect((await fetch(`${adminUrl}/health`)).status).toBe(200);
    const starting = await fetch(`${adminUrl}/ready`);
    expect([starting.status, await starting.json()]).toEqual([503, { ok: false, status: 'starting' }]);
    readiness.set('ready');
    const ready = await fetch(`${adminUrl}/ready`);
    expect([ready.status, await ready.json()]).toEqual([200, { ok: true, status: 'ready' }]);
    readiness.set('draining');
    expect((await fetch(`${adminUrl}/ready`)).status).toBe(503);
    readiness.set('ready');
  });

  it('refuses other paths with 404 and other methods with 405 as problems', async () => {
    const missing = await fetch(`${adminUrl}/relay/1`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    expect(((await missing.json()) as { code: string }).code).toBe('AGENT_ROUTE_NOT_FOUND');
    const post = await fetch(`${adminUrl}/metrics`, { method: 'POST', body: 'x' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    await post.text();
  });

  it('serves Prometheus metrics of trigger requests, step runs, errors and outbound calls with bounded labels', async () => {
    const traced = await fetch(`${a.url()}/relay/41?token=hunter2`, {
      headers: { 'x-request-id': 'trace-9' },
    });
    expect(await traced.text()).toBe('got pong');
    expect(traced.headers.get('x-request-id')).toBe('trace-9');
    expect(seen.at(-1)?.['x-request-id']).toBe('trace-9');
    await (await fetch(`${a.url()}/relay/42`)).text();
    await (await fetch(`${a.url()}/bad`)).text();
    await (await fetch(`${a.url()}/unknown/path-77`)).text();
    await new Promise((r) => setTimeout(r, 20));
    const res = await fetch(`${adminUrl}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const req = (route: string, status: number) =>
      `agent_http_requests_total{deployment="dep-1",server="api",route="${route}",method="GET",status="${status}"}`;
    expect(text).toContain(`${req('relay', 200)} 2`);
    expect(text).toContain(`${req('bad', 500)} 1`);
    expect(text).toContain(`${req('unmatched', 404)} 1`);
    expect(text).toContain('agent_errors_total{code="AGENT_ROUTE_NOT_FOUND"} 1');
    expect(text).toContain(
      'agent_step_runs_total{deployment="dep-1",step="relay",trigger="http",outcome="ok"} 2',
    );
    expect(text).toContain(
      'agent_step_runs_total{deployment="dep-1",step="bad",trigger="http",outcome="error"} 1',
    );
    expect(text).toContain('agent_outbound_calls_total{deployment="dep-1",host="up",outcome="ok"} 2');
    expect(text).toMatch(
      /agent_outbound_call_duration_seconds_count\{deployment="dep-1",host="up",outcome="ok"\} 2/,
    );
    expect(text).toMatch(/agent_http_request_duration_seconds_bucket\{le="\+Inf",deployment="dep-1"/);
    for (const raw of ['/relay/41', 'path-77', 'hunter2', 'trace-9', '127.0.0.1'])
      expect(text).not.toContain(raw);
  });

  it('writes one access log line per trigger request, with the error code on failures', () => {
    const lines = a.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['msg'] === 'request');
    expect(lines.find((l) => l['reqId'] === 'trace-9')).toMatchObject({
      status: 200,
      stepId: 'relay',
      path: '/relay/41',
    });
    expect(lines.find((l) => l['path'] === '/unknown/path-77')).toMatchObject({
      status: 404,
      code: 'AGENT_ROUTE_NOT_FOUND',
    });
    expect(lines.find((l) => l['path'] === '/bad')).toMatchObject({ status: 500, code: 'AGENT_STEP_FAILED' });
    expect(lines).toHaveLength(4);
  });
});

describe('AGENT_ADMIN_PORT and AGENT_ADMIN_BIND', () => {
  const env = { AGENT_BOOTSTRAP: '[]' };
  it('default to 39576 on 127.0.0.1; off disables; a bad port is AGENT_CONFIG_INVALID', () => {
    expect(loadConfig(env).admin).toEqual({ port: 39576, bind: '127.0.0.1' });
    expect(loadConfig({ ...env, AGENT_ADMIN_PORT: 'off' }).admin).toBe('off');
    expect(loadConfig({ ...env, AGENT_ADMIN_PORT: '0', AGENT_ADMIN_BIND: '::1' }).admin).toEqual({
      port: 0,
      bind: '::1',
    });
    for (const bad of ['65536', '-1', 'auto'])
      expect(() => loadConfig({ ...env, AGENT_ADMIN_PORT: bad })).toThrow(
        expect.objectContaining({ code: 'AGENT_CONFIG_INVALID' }),
      );
  });
});
