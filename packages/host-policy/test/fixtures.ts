import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server, ServerResponse, IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HostEntry, LookupFunction } from '../src/index.js';

/** docs/security-requirements.md Part B conventions: host h1. */
export const H1: HostEntry = {
  id: 'h1',
  host: 'https://api.example.com/v1/',
  headers: { Authorization: 'Bearer fixed-secret-token', 'X-Tenant': 'eu-1' },
  allowList: [
    { method: 'GET', uriPattern: '/v1/users/[0-9]+' },
    { method: 'POST', uriPattern: '/v1/items' },
  ],
};

/** A request as the test server saw it. */
export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A real HTTP server on 127.0.0.1, port 0, recording every request and connection. */
export interface TestServer {
  readonly port: number;
  readonly seen: Seen[];
  connections: number;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export async function startServer(handler: Handler = (_q, res) => res.end('ok')): Promise<TestServer> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    seen,
    get connections() {
      return state.connections;
    },
    set connections(n: number) {
      state.connections = n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A recording resolver: `answers` maps host names to addresses; anything else fails like NXDOMAIN. */
export function fakeLookup(
  answers: Record<string, string[] | (() => string[])>,
): LookupFunction & { asked: string[] } {
  const asked: string[] = [];
  const fn = (hostname: string) => {
    asked.push(hostname);
    const a = answers[hostname];
    if (a === undefined) return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    const list = typeof a === 'function' ? a() : a;
    return Promise.resolve(list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return Object.assign(fn, { asked });
}

/** h1 pointed at a local test server under the name api.example.test (resolved by a fake lookup). */
export function h1At(port: number, overrides: Partial<HostEntry> = {}): HostEntry {
  return { ...H1, host: `http://api.example.test:${port}/v1/`, ...overrides };
}
