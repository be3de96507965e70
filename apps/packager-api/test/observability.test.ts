import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { ConfigError, DEFAULT_LIMITS, DEFAULT_TIMEOUTS, loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { Readiness } from '../src/readiness.js';
import { createHttpServer } from '../src/server.js';
import { makeResourceDir, problem } from './helpers.js';

// /ready, /metrics, request ids, access-log codes and LOG_LEVEL against a real server on port 0.

const readiness = new Readiness('starting');
const logs: string[] = [];
let server: Server;
let url = '';

beforeAll(async () => {
  const log = createLogger((line) => logs.push(line));
  const metrics = createMetrics();
  const app = createApp({
    limits: DEFAULT_LIMITS,
    resourceDirs: [makeResourceDir()],
    log,
    readiness,
    metrics,
  });
  server = createHttpServer(app, DEFAULT_LIMITS, DEFAULT_TIMEOUTS, log, metrics);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const requestLines = () =>
  logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'request');
const settle = () => new Promise((r) => setImmediate(r));

describe('GET /ready', () => {
  it('answers 503 while starting, 200 when ready and 503 again while draining', async () => {
    const res = await fetch(`${url}/ready`);
    expect([res.status, await res.json()]).toEqual([503, { ok: false, status: 'starting' }]);
    readiness.set('ready');
    const ok = await fetch(`${url}/ready`);
    expect([ok.status, await ok.json()]).toEqual([200, { ok: true, status: 'ready' }]);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    readiness.set('draining');
    const draining = await fetch(`${url}/ready`);
    expect([draining.status, await draining.json()]).toEqual([503, { ok: false, status: 'draining' }]);
    readiness.set('ready');
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });
});

describe('GET /metrics', () => {
  it('counts requests by route template, method and status, with latency histograms and error codes', async () => {
    await (await fetch(`${url}/key-gen?purpose=sign`)).text();
    await (await fetch(`${url}/key-gen?purpose=nope-secret-value`)).text();
    await (await fetch(`${url}/no/such/path-123`)).text();
    await settle();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('packager_http_requests_total{method="GET",route="/key-gen",status="200"} 1');
    expect(text).toContain('packager_http_requests_total{method="GET",route="/key-gen",status="400"} 1');
    expect(text).toContain('packager_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toContain('packager_errors_total{code="REQUEST_INVALID_PURPOSE"} 1');
    expect(text).toContain('packager_errors_total{code="REQUEST_NOT_FOUND"} 1');
    expect(text).toMatch(
      /packager_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/key-gen",status="200"\} 1/,
    );
    // Bounded labels: no raw path, no query value, no key material.
    expect(text).not.toContain('path-123');
    expect(text).not.toContain('nope-secret-value');
    expect(text).not.toMatch(/secretKeyHex|[0-9a-f]{64}/);
  });
});

describe('X-Request-Id', () => {
  it('echoes a valid inbound id, logs it and uses it as the problem instance', async () => {
    const res = await fetch(`${url}/key-gen`, { headers: { 'x-request-id': 'client-trace.7:a_b' } });
    expect(res.headers.get('x-request-id')).toBe('client-trace.7:a_b');
    expect((await problem(res)).instance).toBe('urn:example:oapp:request:client-trace.7:a_b');
    await settle();
    expect(requestLines().find((l) => l['reqId'] === 'client-trace.7:a_b')).toMatchObject({
      status: 400,
      code: 'REQUEST_MISSING_PURPOSE',
    });
  });

  it('keeps a UUID id as urn:uuid and replaces an invalid or over-long one with a new UUID', async () => {
    const uuid = '3f1c1a52-8a4e-4e0f-9d36-2f5b8e1f0c11';
    const a = await fetch(`${url}/key-gen`, { headers: { 'x-request-id': uuid } });
    expect((await problem(a)).instance).toBe(`urn:uuid:${uuid}`);
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const res = await fetch(`${url}/health`, { headers: { 'x-request-id': bad } });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      await res.text();
    }
    await settle();
    expect(logs.join('')).not.toContain('semi;colon');
  });
});

describe('access log', () => {
  it('gives 4xx lines the problem code and success lines none', async () => {
    await (await fetch(`${url}/health`, { headers: { 'x-request-id': 'ok-1' } })).text();
    await (await fetch(`${url}/health`, { method: 'POST', headers: { 'x-request-id': 'bad-1' } })).text();
    await settle();
    const ok = requestLines().find((l) => l['reqId'] === 'ok-1')!;
    expect(ok['status']).toBe(200);
    expect('code' in ok).toBe(false);
    expect(requestLines().find((l) => l['reqId'] === 'bad-1')).toMatchObject({
      status: 405,
      code: 'REQUEST_METHOD_NOT_ALLOWED',
    });
  });
});

describe('Vary: Accept', () => {
  it('is sent on negotiated answers, the 406 included', async () => {
    const ok = await fetch(`${url}/key-gen?purpose=sign`);
    expect(ok.headers.get('vary')).toBe('Accept');
    const refused = await fetch(`${url}/key-gen?purpose=sign`, { headers: { accept: 'image/png' } });
    expect(refused.status).toBe(406);
    expect(refused.headers.get('vary')).toBe('Accept');
  });
});

describe('LOG_LEVEL', () => {
  it('defaults to info, takes error|warn|info|debug in any case and refuses anything else', () => {
    expect(loadConfig({}).logLevel).toBe('info');
    expect(loadConfig({ LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
    expect(loadConfig({ LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL/);
  });

  it('drops lines below the level', () => {
    const lines: string[] = [];
    const log = createLogger((l) => lines.push(l), undefined, 'warn');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['w', 'e']);
  });
});

describe('an upload refused before its body (Expect: 100-continue over the limit)', () => {
  it('is logged with its code and counted in the metrics like any request', async () => {
    const port = Number(new URL(url).port);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          'POST /workflow-package HTTP/1.1\r\nHost: a\r\nX-Request-Id: big-1\r\n' +
            'Content-Type: multipart/form-data; boundary=b\r\n' +
            `Content-Length: ${DEFAULT_LIMITS.workflowBytes * 4}\r\nExpect: 100-continue\r\n\r\n`,
        ),
      );
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    await settle();
    expect(requestLines().filter((l) => l['reqId'] === 'big-1')).toEqual([
      expect.objectContaining({ status: 413, code: 'UPLOAD_REQUEST_TOO_LARGE', refusedBeforeBody: true }),
    ]);
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toContain(
      'packager_http_requests_total{method="POST",route="/workflow-package",status="413"} 1',
    );
    expect(text).toMatch(/packager_errors_total\{code="UPLOAD_REQUEST_TOO_LARGE"\} [1-9]/);
  });
});
