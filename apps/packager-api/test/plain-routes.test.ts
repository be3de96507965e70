// Table routes run on node:http's own request and response (ADR 0120): Express's prototypes go under them only
// for a route that asks (`express: true`), a URL Express must read, and before the error middleware or the
// fallback. These tests pin each of those, and that `simplePath` reads a URL as Express's `req.path` does.
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeFront, type RouteSpec } from '../src/app.js';
import { simplePath, type TableHandler } from '../src/plain-http.js';
import { useServer } from './helpers.js';

const srv = useServer();

/** What Express's `req.path` says for `url` (its getter on a bare object with Express's request prototype). */
function expressPath(url: string): string | undefined {
  const req = Object.create(express.request as object, {
    url: { value: url, writable: true, configurable: true },
  }) as { path: string | undefined };
  return req.path;
}

/** A deterministic mix of URL-ish strings around every character the fast path treats specially. */
function urlCorpus(): string[] {
  const pieces = [
    '/',
    'a',
    'string-encrypt',
    '?',
    '=',
    '&',
    '#',
    ' ',
    '\t',
    '\n',
    '\r',
    '\f',
    '\u00a0',
    '\ufeff',
  ];
  const more = ['%20', '..', ';', '\u00e9', '*', 'http://h/x', '//', '\u0000'];
  const all = [...pieces, ...more];
  const out = [
    '/',
    '/health',
    '/health?x=1',
    '/health?',
    '/a?b?c',
    '/a#b',
    '/a?b#c',
    '*',
    '',
    'health',
    '/\u00a0',
  ];
  let seed = 0x2545f491;
  const next = (n: number): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  for (let i = 0; i < 2000; i++) {
    let u = next(8) === 0 ? '' : '/';
    for (let k = next(7); k >= 0; k--) u += all[next(all.length)];
    out.push(u);
  }
  return out;
}

describe('simplePath', () => {
  it("agrees with Express's req.path wherever it answers, and answers for every plain origin-form path", () => {
    let answered = 0;
    for (const url of urlCorpus()) {
      const path = simplePath(url);
      if (path === undefined) continue;
      answered++;
      expect(path, JSON.stringify(url)).toBe(expressPath(url));
    }
    expect(answered).toBeGreaterThan(300);
    expect(simplePath('/string-encrypt')).toBe('/string-encrypt');
    expect(simplePath('/key-gen?purpose=sign')).toBe('/key-gen');
    for (const odd of ['/a#b', '/a b', 'http://h/x', '*', '', undefined])
      expect(simplePath(odd)).toBeUndefined();
  });
});

describe('the route front (ADR 0120)', () => {
  const seen: Record<string, { req: object | null; res: object | null }> = {};
  let server: Server;
  let base = '';
  const note =
    (name: string): TableHandler =>
    (req, res) => {
      seen[name] = { req: Object.getPrototypeOf(req) as object, res: Object.getPrototypeOf(res) as object };
      res.end('ok');
    };
  beforeAll(async () => {
    const app = express();
    const expressRoute: RequestHandler = (req, res) => {
      seen['express'] = {
        req: Object.getPrototypeOf(req) as object,
        res: Object.getPrototypeOf(res) as object,
      };
      res.status(200).send(req.query['q']);
    };
    const failing: TableHandler = () => {
      throw new Error('boom');
    };
    const table = new Map<string, RouteSpec>([
      ['GET /plain', { method: 'get', path: '/plain', handler: note('plain') }],
      ['GET /express', { method: 'get', path: '/express', handler: expressRoute, express: true }],
      ['GET /fails', { method: 'get', path: '/fails', handler: failing }],
      ['GET /skips', { method: 'get', path: '/skips', handler: (_req, _res, next) => next() }],
    ]);
    const onError: ErrorRequestHandler = (err: Error, req, res, _next) => {
      seen['error'] = {
        req: Object.getPrototypeOf(req) as object,
        res: Object.getPrototypeOf(res) as object,
      };
      res.status(500).json({ error: err.message });
    };
    const otherwise: RequestHandler = (req, res) => void res.status(404).json({ path: req.path });
    app.use((_req, res) => void res.status(404).json({ via: 'app' }));
    server = createServer(routeFront(app, table, () => undefined, otherwise, onError));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("gives a table route node's own request and response, without Express's prototypes", async () => {
    expect(await (await fetch(`${base}/plain?x=1`)).text()).toBe('ok');
    expect(seen['plain']).toEqual({ req: IncomingMessage.prototype, res: ServerResponse.prototype });
  });

  it("gives an `express: true` route Express's request and response API", async () => {
    expect(await (await fetch(`${base}/express?q=hello`)).text()).toBe('hello');
    expect(seen['express']!.req).not.toBe(IncomingMessage.prototype);
    expect(Object.getPrototypeOf(seen['express']!.req)).toBe(express.request);
  });

  it("puts Express's prototypes under a request before the error middleware and the fallback run", async () => {
    const failed = await fetch(`${base}/fails`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: 'boom' });
    expect(Object.getPrototypeOf(seen['error']!.req)).toBe(express.request);
    const skipped = await fetch(`${base}/skips`);
    expect(skipped.status).toBe(404);
    expect(await skipped.json()).toEqual({ path: '/skips' });
    const unknown = await fetch(`${base}/nowhere`);
    expect(await unknown.json()).toEqual({ via: 'app' });
  });
});

describe('the service on plain table routes', () => {
  it("answers HEAD to a GET route with the GET answer's headers and no body", async () => {
    const get = await fetch(`${srv.url}/health`);
    const body = await get.text();
    const head = await fetch(`${srv.url}/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(get.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});

describe('the service on a URL that is not a plain path', () => {
  it('routes it as Express reads it (a fragment in the request target)', async () => {
    const { port } = new URL(srv.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.end('GET /health#frag HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      });
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(answer.endsWith('{"ok":true}')).toBe(true);
  });
});
