import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateBootstrap, type DeploymentRecord } from '@org/workflow-compiler';
import { Redactor } from '@org/workflow-engine';
import { PROTOTYPE_NAMES } from '@org/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeAll,
  createOutput,
  createRuntime,
  createStringDecryptor,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  hostPolicyOf,
  listenAll,
  type OutboundTransport,
  type Runtime,
  type TransportRequest,
} from '../src/index.js';

// createRuntime on its own: no agent start-up, a real engine, real trigger servers on port 0.

const started: Runtime[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const r of started.splice(0)) {
    await r.stop(500);
    await closeAll(r, 0);
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const record = (over: Record<string, unknown> = {}): DeploymentRecord =>
  validateBootstrap(
    JSON.stringify([
      {
        deploymentId: 'd1',
        remoteConfiguration: 'unused.oapp',
        allowExternalHostAccess: [
          {
            id: 'api',
            host: 'https://api.example.com',
            headers: { authorization: 'Bearer fixed-secret-9d2c' },
            allowList: [{ method: 'GET', uriPattern: '/v1/.*' }],
          },
        ],
        allowHttpServerAccess: [{ id: 'web', port: 9 }],
        ...over,
      },
    ]),
  )[0] as DeploymentRecord;

const call = (path: string, after = '') => ({
  stepId: `call${path.replace(/\W/g, '-')}`,
  urlGenerator: { script: `context.setUrl('api', '${path}');` },
  resultsProcessor: {
    script: `context.sendMetric('status', Number(context.getProperty('status_code') || 0)); ${after}`,
  },
});

const workflow = {
  workflows: [
    {
      name: 'w',
      steps: [
        call('/v1/items', "console.log('body ' + context.getBody());"),
        call('/admin'),
        {
          stepId: 'hello',
          trigger: { http: { server: 'web', path: '/hello' } },
          resultsProcessor: { script: "context.setBody('hi ' + context.getTimestamp());" },
        },
        { stepId: 'boom', resultsProcessor: { script: "throw new Error('boom');" } },
      ],
    },
  ],
};

async function start(
  transport: OutboundTransport | undefined,
  over: Partial<Parameters<typeof createRuntime>[0]> = {},
) {
  const lines: string[] = [];
  const redactor = new Redactor();
  redactor.add('fixed-secret-9d2c');
  const rec = record();
  const dataDir = mkdtempSync(join(tmpdir(), 'wr-'));
  dirs.push(dataDir);
  const runtime = await createRuntime({
    deployments: [{ record: rec, workflow, policy: hostPolicyOf(rec, []), source: 'test' }],
    redactor,
    output: createOutput((l) => lines.push(l), redactor, undefined, 'debug'),
    decryptor: createStringDecryptor([]),
    limits: DEFAULT_LIMITS,
    timeouts: DEFAULT_TIMEOUTS,
    dataDir,
    ports: { web: 0 },
    now: () => 1_700_000_000_000,
    transport,
    ...over,
  });
  started.push(runtime);
  const metrics = () =>
    lines
      .map((l) => JSON.parse(l) as { type?: string; key?: string; value?: number })
      .filter((o) => o.type === 'metric');
  return { runtime, lines, metrics };
}

const ok =
  (body: string, seen: TransportRequest[] = []): OutboundTransport =>
  (req) => {
    seen.push(req);
    return Promise.resolve({ status: 200, headers: {}, body: new TextEncoder().encode(body) });
  };

describe('createRuntime', () => {
  it('the transport gets the decided URL, method and merged headers (fixed host headers included)', async () => {
    const seen: TransportRequest[] = [];
    const { runtime, lines, metrics } = await start(ok('[1,2]', seen));
    const r = await runtime.triggerStep('d1', 'call-v1-items');
    expect(r?.errored).toBe(false);
    expect(seen.map((s) => [s.method, s.url, s.headers['authorization']])).toEqual([
      ['GET', 'https://api.example.com/v1/items', 'Bearer fixed-secret-9d2c'],
    ]);
    expect(metrics().map((m) => [m.key, m.value])).toEqual([['status', 200]]);
    expect(lines.some((l) => l.includes('body [1,2]'))).toBe(true);
    expect(lines.join('\n')).not.toContain('fixed-secret-9d2c');
  });

  it('the host policy decides first: a refused path never reaches the transport', async () => {
    const seen: TransportRequest[] = [];
    const { runtime, lines } = await start(ok('x', seen));
    const r = await runtime.triggerStep('d1', 'call-admin');
    expect(seen).toEqual([]);
    expect(r?.errored).toBe(true);
    expect(lines.join('\n')).toMatch(/step errored.*POLICY_/);
  });

  it('transport errors: its code is kept; a hang is POLICY_TIMEOUT at the time limit; an oversized body is refused', async () => {
    const coded: OutboundTransport = () =>
      Promise.reject(Object.assign(new Error('not mocked'), { code: 'TESTRUNNER_HOST_NOT_MOCKED' }));
    const hang: OutboundTransport = (req) =>
      new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    const big: OutboundTransport = () =>
      Promise.resolve({
        status: 200,
        headers: {},
        body: new Uint8Array(DEFAULT_LIMITS.outboundResponseBytes + 1),
      });
    const errorsOf = async (t: OutboundTransport, over = {}) => {
      const { runtime } = await start(t, over);
      return (await runtime.triggerStep('d1', 'call-v1-items'))?.errors.join('; ') ?? '';
    };
    expect(await errorsOf(coded)).toContain('TESTRUNNER_HOST_NOT_MOCKED');
    expect(await errorsOf(hang, { timeouts: { ...DEFAULT_TIMEOUTS, outboundMs: 200 } })).toContain(
      'POLICY_TIMEOUT',
    );
    expect(await errorsOf(big)).toContain('POLICY_RESPONSE_TOO_LARGE');
  });

  it('triggerStep: an unknown step is AGENT_STEP_NOT_FOUND; a throwing step is logged and resolves errored', async () => {
    const { runtime, lines } = await start(undefined);
    await expect(runtime.triggerStep('d1', 'nope')).rejects.toMatchObject({ code: 'AGENT_STEP_NOT_FOUND' });
    await expect(runtime.triggerStep('other', 'hello')).rejects.toMatchObject({
      code: 'AGENT_STEP_NOT_FOUND',
    });
    const r = await runtime.triggerStep('d1', 'boom');
    expect(r?.errored).toBe(true);
    expect(lines.some((l) => l.includes('"msg":"step errored"') && l.includes('boom'))).toBe(true);
  });

  it('trigger servers listen on the bind address given, port 0, and answer with the fixed clock', async () => {
    const { runtime } = await start(undefined, { bindAddress: '127.0.0.1' });
    const [l] = await listenAll(runtime);
    expect(l?.address).toBe('127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${l!.port}/hello`);
    expect([res.status, await res.text()]).toEqual([200, 'hi 1700000000000']);
  });

  // Regression: the port table was read with inherited properties, so a server named `toString` got a function.
  it.each(PROTOTYPE_NAMES)('a server named %s takes its own port, not an inherited property', async (id) => {
    const rec = record({ allowHttpServerAccess: [{ id, port: 4242 }] });
    const redactor = new Redactor();
    const runtime = await createRuntime({
      deployments: [
        { record: rec, workflow: { workflows: [] }, policy: hostPolicyOf(rec, []), source: 'test' },
      ],
      redactor,
      output: createOutput(() => undefined, redactor),
      decryptor: createStringDecryptor([]),
      limits: DEFAULT_LIMITS,
      timeouts: DEFAULT_TIMEOUTS,
    });
    started.push(runtime);
    expect(runtime.servers.map((s) => [s.id, s.port])).toEqual([[id, 4242]]);
  });

  it('prototype names pass as ordinary request and response headers of an http trigger', async () => {
    const names = JSON.stringify(PROTOTYPE_NAMES);
    const echo = {
      workflows: [
        {
          name: 'w',
          steps: [
            {
              stepId: 'echo',
              trigger: { http: { server: 'web', path: '/echo' } },
              resultsProcessor: {
                script: `const names = ${names}; context.setBody(JSON.stringify(names.map((n) => context.getHeader(n)))); names.forEach((n) => context.setHeader(n, 'out-' + n));`,
              },
            },
          ],
        },
      ],
    };
    const rec = record();
    const { runtime } = await start(undefined, {
      bindAddress: '127.0.0.1',
      deployments: [{ record: rec, workflow: echo, policy: hostPolicyOf(rec, []), source: 'test' }],
    });
    const [l] = await listenAll(runtime);
    // node:http, not fetch: fetch drops a header named __proto__ before sending it.
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      httpGet(
        {
          host: '127.0.0.1',
          port: l!.port,
          path: '/echo',
          headers: Object.fromEntries(PROTOTYPE_NAMES.map((n) => [n, `in-${n}`])),
        },
        resolve,
      ).on('error', reject),
    );
    let text = '';
    for await (const chunk of res) text += String(chunk);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(text)).toEqual(PROTOTYPE_NAMES.map((n) => JSON.stringify([`in-${n}`])));
    for (const n of PROTOTYPE_NAMES) {
      const k = n.toLowerCase();
      expect([n, Object.hasOwn(res.headersDistinct, k) ? res.headersDistinct[k] : undefined]).toEqual([
        n,
        [`out-${n}`],
      ]);
    }
  });

  it('refuses a trigger on an undeclared server before anything runs, and closes what it opened', async () => {
    const bad = {
      workflows: [{ name: 'w', steps: [{ stepId: 's', trigger: { http: { server: 'nope', path: '/x' } } }] }],
    };
    const rec = record();
    const redactor = new Redactor();
    await expect(
      createRuntime({
        deployments: [{ record: rec, workflow: bad, policy: hostPolicyOf(rec, []), source: 'test' }],
        redactor,
        output: createOutput(() => undefined, redactor),
        decryptor: createStringDecryptor([]),
        limits: DEFAULT_LIMITS,
        timeouts: DEFAULT_TIMEOUTS,
      }),
    ).rejects.toMatchObject({ code: 'AGENT_TRIGGER_INVALID' });
  });
});
