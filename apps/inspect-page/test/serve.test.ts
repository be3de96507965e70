import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectPageAnswer, inspectPageCsp, inspectPageHtml, serveInspectPage } from '../src/index.js';

const html = () => new TextDecoder().decode(inspectPageHtml());
const b64 = (s: string) => createHash('sha256').update(s, 'utf8').digest('base64');

describe('the built page', () => {
  it('is one HTML file whose policy allows exactly its inline script and style, and no connection', () => {
    const page = html();
    const scripts = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href=|<img|<iframe/i);
    const csp = inspectPageCsp();
    expect(csp).toContain(`script-src 'sha256-${b64(scripts[0]!)}'`);
    expect(csp).toContain(`style-src 'sha256-${b64(styles[0]!)}'`);
    expect(csp).toContain("connect-src 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'none'");
    // The same policy, less frame-ancestors, in the file itself (for the page opened from the file system).
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"\s*\/?>/.exec(page)![1]!;
    expect(meta).toBe(csp.replace("; frame-ancestors 'none'", ''));
  });

  it('loads no Node built-in, no addon and no require: the browser build of the libraries', () => {
    const bundle = readFileSync(new URL('../dist/inspect.js', import.meta.url), 'utf8');
    expect(bundle).not.toMatch(/\bnode:[a-z]/);
    expect(bundle).not.toMatch(/\brequire\(/);
    expect(bundle).not.toContain('sodium-native');
    const meta = JSON.parse(readFileSync(new URL('../dist/page-meta.json', import.meta.url), 'utf8')) as {
      bundleBytes: number;
      bundleGzipBytes: number;
    };
    console.log(`inspect-page bundle: ${meta.bundleBytes} bytes, ${meta.bundleGzipBytes} gzipped`);
    // A budget, so that a heavy import is noticed: today about 80 KiB.
    expect(meta.bundleBytes).toBeLessThan(200 * 1024);
  });
});

describe('serveInspectPage', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer(serveInspectPage);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('answers GET with the page and its security headers', async () => {
    const res = await fetch(`${base}/inspect`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(inspectPageCsp());
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.text()).toBe(html());
  });

  it('answers a matching If-None-Match with 304, HEAD without a body, other methods with 405', async () => {
    const etag = (await fetch(`${base}/`)).headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const cached = await fetch(`${base}/`, { headers: { 'If-None-Match': etag } });
    expect(cached.status).toBe(304);
    const head = await fetch(`${base}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(inspectPageHtml().byteLength));
    const post = await fetch(`${base}/`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(inspectPageAnswer('DELETE').status).toBe(405);
  });
});
