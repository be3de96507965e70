import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspectPageEtag, inspectPageHeaders, inspectPageHtml } from '@org/inspect-page';
import { newCallerToken, parseTokenHashes } from '@org/packager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createHttpServer } from '../src/server.js';
import { makeResourceDir } from './helpers.js';

// GET /inspect: the inspection page of @org/inspect-page (ADR 0146), served by the real server on port 0 with caller
// tokens configured: the page stays open, as /health does (ADR 0140), with the headers the page needs.

const token = newCallerToken(['package', 'inspect', 'key-gen'], 'all');

/** The page's headers as fetch reads them (lower-case names). */
const pageHeaders = (): Record<string, string> =>
  Object.fromEntries(Object.entries(inspectPageHeaders()).map(([k, v]) => [k.toLowerCase(), v]));

describe('GET /inspect on the Express service', () => {
  let server: Server;
  let url = '';

  beforeAll(async () => {
    const log = createLogger(() => {});
    const app = createApp({
      limits: DEFAULT_LIMITS,
      resourceDirs: [makeResourceDir()],
      log,
      tokens: parseTokenHashes(token.record),
    });
    server = createHttpServer(app, DEFAULT_LIMITS, DEFAULT_TIMEOUTS, log);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers the page without a caller token, with its CSP, nosniff, framing and cache headers', async () => {
    // Tokens are on: an operation without one is refused...
    expect((await fetch(`${url}/key-gen?purpose=sign`)).status).toBe(401);
    // ...and the page is not.
    const res = await fetch(`${url}/inspect`);
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(body).equals(Buffer.from(inspectPageHtml()))).toBe(true);
    for (const [name, value] of Object.entries(pageHeaders()))
      expect(res.headers.get(name), name).toBe(value);
    expect(res.headers.get('content-length')).toBe(String(inspectPageHtml().byteLength));
    expect(res.headers.get('content-security-policy')).toMatch(/connect-src 'none'/);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers HEAD with the same headers and no body, and 304 to a matching If-None-Match', async () => {
    const head = await fetch(`${url}/inspect`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    for (const [name, value] of Object.entries(pageHeaders()))
      expect(head.headers.get(name), name).toBe(value);
    expect(head.headers.get('content-length')).toBe(String(inspectPageHtml().byteLength));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const cached = await fetch(`${url}/inspect`, { headers: { 'If-None-Match': inspectPageEtag() } });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('etag')).toBe(inspectPageEtag());
    expect((await cached.arrayBuffer()).byteLength).toBe(0);
  });

  it('refuses another method with the service 405 problem and Allow: GET, HEAD', async () => {
    const res = await fetch(`${url}/inspect`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as { code: string }).code).toBe('REQUEST_METHOD_NOT_ALLOWED');
  });
});
