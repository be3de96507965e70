import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateBootstrap, type DeploymentRecord } from '@org/workflow-compiler';
import { Redactor } from '@org/workflow-engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  closeAll,
  createOutput,
  createRuntime,
  createStringDecryptor,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  hostPolicyOf,
  listenAll,
  requestIdOf,
  type Runtime,
  type RuntimeMetrics,
  type OutboundCallEvent,
  type StepRunEvent,
  type TriggerRequestEvent,
} from '../src/index.js';

// Request ids, access log lines and metric events of trigger servers: a real runtime on port 0 calling a real
// local HTTP server.

let upstream: Server;
let upstreamPort = 0;
const seen: IncomingHttpHeaders[] = [];
beforeAll(async () => {
  upstream = createServer((req, res) => {
    seen.push(req.headers);
    res.end('pong');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamPort = (upstream.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => upstream.close(r)));

const started: Runtime[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const r of started.splice(0)) {
    await closeAll(r, 0);
    await r.stop(500);
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  seen.length = 0;
});

const workflow = {
  workflows: [
    {
      name: 'w',
      steps: [
        {
          stepId: 'relay',
          trigger: { http: { server: 'web', path: '/relay/[0-9]+' } },
          urlGenerator: { script: "context.setUrl('up', '/ping');" },
          resultsProcessor: { script: "context.setBody('got ' + context.getBody());" },
        },
        {
          stepId: 'refused',
          trigger: { http: { server: 'web', path: '/refused' } },
          urlGenerator: { script: "context.setUrl('nowhere-' + context.getTimestamp(), '/x');" },
        },
        {
          stepId: 'upload',
          trigger: { http: { server: 'web', method: 'POST', path: '/upload' } },
          resultsProcessor: { script: "context.setBody('ok');" },
        },
        { stepId: 'tick', trigger: { runOnce: true }, resultsProcessor: { script: "context.setBody('t');" } },
      ],
    },
  ],
};

interface Events {
  requests: TriggerRequestEvent[];
  runs: StepRunEvent[];
  calls: OutboundCallEvent[];
}

async function start() {
  const lines: string[] = [];
  const events: Events = { requests: [], runs: [], calls: [] };
  const metrics: RuntimeMetrics = {
    triggerRequest: (e) => events.requests.push(e),
    stepRun: (e) => events.runs.push(e),
    outboundCall: (e) => events.calls.push(e),
  };
  const record = validateBootstrap(
    JSON.stringify([
      {
        deploymentId: 'd1',
        remoteConfiguration: 'unused.oapp',
        allowExternalHostAccess: [
          {
            id: 'up',
            host: `http://127.0.0.1:${upstreamPort}`,
            allowList: [{ method: 'GET', uriPattern: '/ping' }],
          },
        ],
        allowHttpServerAccess: [{ id: 'web', port: 9 }],
      },
    ]),
  )[0] as DeploymentRecord;
  const redactor = new Redactor();
  const dataDir = mkdtempSync(join(tmpdir(), 'wr-obs-'));
  dirs.push(dataDir);
  const runtime = await createRuntime({
    deployments: [{ record, workflow, policy: hostPolicyOf(record, ['up']), source: 'test' }],
    redactor,
    output: createOutput((l) => lines.push(l), redactor),
    decryptor: createStringDecryptor([]),
    limits: DEFAULT_LIMITS,
    timeouts: DEFAULT_TIMEOUTS,
    dataDir,
    ports: { web: 0 },
    bindAddress: '127.0.0.1',
    metrics,
  });
  started.push(runtime);
  const [web] = await listenAll(runtime);
  const url = `http://127.0.0.1:${web!.port}`;
  const requestLines = () =>
    lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'request');
  return { runtime, url, events, requestLines };
}

describe('requestIdOf', () => {
  it('keeps a valid inbound id and replaces a bad or long one with a UUID', () => {
    expect(requestIdOf('abc-123_x.y:z')).toBe('abc-123_x.y:z');
    expect(requestIdOf('a'.repeat(128))).toBe('a'.repeat(128));
    const uuid = /^[0-9a-f-]{36}$/;
    for (const bad of ['a'.repeat(129), 'has space', 'quote"', '', 'new\nline', ['a', 'b'], undefined])
      expect(requestIdOf(bad)).toMatch(uuid);
  });
});

describe('trigger servers', () => {
  it('echo the inbound X-Request-Id and send it on the outbound calls of that request', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/relay/7`, { headers: { 'x-request-id': 'trace-42' } });
    expect(await res.text()).toBe('got pong');
    expect(res.headers.get('x-request-id')).toBe('trace-42');
    expect(seen.map((h) => h['x-request-id'])).toEqual(['trace-42']);
  });

  it('generate an id for a missing or invalid one and send that one outbound', async () => {
    const { url } = await start();
    const res = await fetch(`${url}/relay/8`, { headers: { 'x-request-id': 'bad id<script>' } });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.map((h) => h['x-request-id'])).toEqual([id]);
  });

  it('write one access log line per request: step, status, duration and the code of an error', async () => {
    const { url, requestLines } = await start();
    await (await fetch(`${url}/relay/1?token=s3cr3t`, { headers: { 'x-request-id': 'r1' } })).text();
    await (await fetch(`${url}/nothing-here`, { headers: { 'x-request-id': 'r2' } })).text();
    await (await fetch(`${url}/refused`, { headers: { 'x-request-id': 'r3' } })).text();
    await new Promise((r) => setImmediate(r));
    const byId = new Map(requestLines().map((l) => [l['reqId'], l]));
    expect(byId.get('r1')).toMatchObject({
      deploymentId: 'd1',
      server: 'web',
      method: 'GET',
      path: '/relay/1',
    });
    expect(byId.get('r1')).toMatchObject({ stepId: 'relay', status: 200 });
    expect(byId.get('r1')!['code']).toBeUndefined();
    expect(JSON.stringify(byId.get('r1'))).not.toContain('s3cr3t');
    expect(byId.get('r2')).toMatchObject({ status: 404, code: 'AGENT_ROUTE_NOT_FOUND' });
    expect(byId.get('r2')!['stepId']).toBeUndefined();
    expect(byId.get('r3')).toMatchObject({ stepId: 'refused', status: 500, code: 'AGENT_STEP_FAILED' });
    expect(requestLines()).toHaveLength(3);
  });

  it('log and count an upload refused before its body (Expect: 100-continue over the limit) like any request', async () => {
    const { url, events, requestLines } = await start();
    const port = Number(new URL(url).port);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          'POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nX-Request-Id: big-1\r\n' +
            `Content-Length: ${DEFAULT_LIMITS.rawBodyBytes + 1}\r\nExpect: 100-continue\r\n\r\n`,
        ),
      );
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply.toLowerCase()).toContain('x-request-id: big-1');
    await new Promise((r) => setImmediate(r));
    expect(requestLines().filter((l) => l['reqId'] === 'big-1')).toEqual([
      expect.objectContaining({ stepId: 'upload', status: 413, code: 'UPLOAD_BODY_TOO_LARGE' }),
    ]);
    expect(events.requests.map((e) => [e.route, e.status, e.code])).toContainEqual([
      'upload',
      413,
      'UPLOAD_BODY_TOO_LARGE',
    ]);
  });

  it('report requests by step (not path), step runs by trigger and outbound calls by host id and outcome', async () => {
    const { url, events, runtime } = await start();
    runtime.startTriggers();
    await (await fetch(`${url}/relay/1`)).text();
    await (await fetch(`${url}/relay/2`, { method: 'PROPFIND' })).text();
    await (await fetch(`${url}/refused`)).text();
    await (await fetch(`${url}/x`)).text();
    await new Promise((r) => setTimeout(r, 20));
    const requests = events.requests.map((e) => [e.route, e.method, e.status]);
    expect(requests).toContainEqual(['relay', 'GET', 200]);
    expect(requests).toContainEqual(['unmatched', 'GET', 404]);
    expect(requests).toContainEqual(['relay', 'OTHER', 200]);
    // Two paths of one trigger are one label value; an unknown method is OTHER.
    expect(new Set(events.requests.map((e) => e.route))).toEqual(new Set(['relay', 'refused', 'unmatched']));
    expect(events.runs.map((e) => [e.stepId, e.trigger, e.outcome])).toEqual(
      expect.arrayContaining([
        ['relay', 'http', 'ok'],
        ['refused', 'http', 'error'],
        ['tick', 'runOnce', 'ok'],
      ]),
    );
    expect(events.calls.map((e) => [e.deploymentId, e.hostId, e.outcome])).toEqual([
      ['d1', 'up', 'ok'],
      ['d1', 'up', 'ok'],
      ['d1', '(unknown)', 'refused'],
    ]);
    for (const e of [...events.requests, ...events.runs, ...events.calls])
      expect(e.seconds).toBeGreaterThanOrEqual(0);
  });
});
