import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AllowedCall, HostEntry, OutboundCall } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, PolicyError, sendOutbound } from '../src/index.js';
import type { TestServer } from './fixtures.js';
import { fakeLookup, h1At, startServer } from './fixtures.js';

let api: TestServer;
let evil: TestServer;
let lookup: ReturnType<typeof fakeLookup>;

beforeEach(async () => {
  evil = await startServer();
  api = await startServer((req, res) => {
    const to = (status: number, location: string) => {
      res.statusCode = status;
      res.setHeader('location', location);
      res.end();
    };
    const routes: Record<string, () => void> = {
      '/v1/users/1': () => to(302, `http://evil.example.test:${evil.port}/`),
      '/v1/users/2': () => to(302, '/v1/users/3'),
      '/v1/users/4': () => to(301, 'admin'),
      '/v1/users/5': () => to(302, `http://api.example.test:${evil.port}/v1/users/3`),
      '/v1/users/6': () => to(302, 'https://api.example.test/v1/users/3'),
      '/v1/users/7': () => to(302, '/v2/users/3'),
      '/v1/users/8': () => to(302, `//evil.example.test:${evil.port}/x`),
      '/v1/users/9': () => to(302, 'http://[::1'),
      '/v1/items': () => to(303, '/v1/users/3'),
      '/v1/items/307': () => to(307, '/v1/items/echo'),
      '/v1/users/304': () => {
        res.statusCode = 304;
        res.end();
      },
    };
    const loop = /^\/v1\/users\/(1\d\d)$/.exec(req.url ?? '');
    if (loop) return to(302, `/v1/users/${Number(loop[1]) + 1}`);
    const route = routes[req.url ?? ''];
    if (route) return route();
    res.end(`final ${req.method} ${req.url}`);
  });
  lookup = fakeLookup({ 'api.example.test': ['127.0.0.1'], 'evil.example.test': ['127.0.0.1'] });
});
afterEach(async () => {
  await api.close();
  await evil.close();
});

const ENTRY = (port: number): HostEntry =>
  h1At(port, {
    allowList: [
      { method: 'GET', uriPattern: '/v1/users/[0-9]+' },
      { method: 'POST', uriPattern: '/v1/items(?:/307|/echo)?' },
    ],
  });

function decide(call: Partial<OutboundCall>): AllowedCall {
  const policy = compileHostPolicy([ENTRY(api.port)], { allowPrivateNetwork: ['h1'] });
  const d = checkOutboundCall(policy, { hostId: 'h1', path: 'users/1', method: 'GET', ...call });
  if (!d.allowed) throw new Error(`expected allowed, got ${d.code}`);
  return d;
}

const send = (d: AllowedCall, maxRedirects?: number) =>
  sendOutbound(d, {
    maxResponseBytes: 4096,
    timeoutMs: 3000,
    lookup,
    ...(maxRedirects === undefined ? {} : { maxRedirects }),
  });

async function blocked(p: Promise<unknown>, rule: string) {
  await expect(p).rejects.toThrowCode(PolicyError, 'POLICY_REDIRECT_BLOCKED');
  await p.catch((e: PolicyError) => expect(e.details).toMatchObject({ hostId: 'h1', rule }));
}

describe('sendOutbound redirects', () => {
  it('S38: refuses 302 to another origin with POLICY_REDIRECT_BLOCKED; nothing reaches it, not even DNS', async () => {
    await blocked(send(decide({ path: 'users/1' })), 'redirect-origin');
    expect(evil.connections).toBe(0);
    expect(lookup.asked).toEqual(['api.example.test']);
    expect(api.seen[0]!.headers.authorization).toBe('Bearer fixed-secret-token');
  });

  it.each([
    ['same host, other port', 'users/5'],
    ['other scheme', 'users/6'],
    ['scheme-relative other host', 'users/8'],
  ])('S38: refuses a redirect to %s', async (_name, path) => {
    await blocked(send(decide({ path })), 'redirect-origin');
    expect(evil.connections).toBe(0);
  });

  it('S38: follows a same-origin redirect after the same allowList check, keeping the fixed headers', async () => {
    const res = await send(decide({ path: 'users/2' }));
    expect(res).toMatchObject({ status: 200, redirects: 1 });
    expect(res.url).toBe(`http://api.example.test:${api.port}/v1/users/3`);
    expect(new TextDecoder().decode(res.body)).toBe('final GET /v1/users/3');
    expect(api.seen.map((s) => s.headers.authorization)).toEqual([
      'Bearer fixed-secret-token',
      'Bearer fixed-secret-token',
    ]);
    expect(lookup.asked).toEqual(['api.example.test', 'api.example.test']);
  });

  it('S38: refuses a same-origin redirect the allowList does not allow', async () => {
    const p = send(decide({ path: 'users/4' }));
    await blocked(p, 'redirect-recheck');
    await p.catch((e: PolicyError) =>
      expect(e.details).toMatchObject({ deniedBy: 'POLICY_PATH_NOT_ALLOWED' }),
    );
    expect(api.seen).toHaveLength(1);
  });

  it('S38: refuses a same-origin redirect out of the base path', async () => {
    await blocked(send(decide({ path: 'users/7' })), 'redirect-base-path');
  });

  it('S38: refuses an unparsable Location', async () => {
    await blocked(send(decide({ path: 'users/9' })), 'redirect-location');
  });

  it('S38: stops after 5 same-origin hops with POLICY_REDIRECT_BLOCKED', async () => {
    await blocked(send(decide({ path: 'users/100' })), 'redirect-hop-limit');
    expect(api.seen).toHaveLength(6);
    const res = await send(decide({ path: 'users/195' }));
    expect(res).toMatchObject({ status: 200, redirects: 5 });
  });

  it('S38: with maxRedirects 0 a same-origin redirect is refused too', async () => {
    await blocked(send(decide({ path: 'users/2' }), 0), 'redirect-hop-limit');
  });

  it('turns POST into GET without body on 303 and keeps POST with body on 307', async () => {
    const d303 = decide({ path: 'items', method: 'POST' });
    const res = await sendOutbound(d303, { maxResponseBytes: 4096, timeoutMs: 3000, lookup, body: 'x' });
    expect(new TextDecoder().decode(res.body)).toBe('final GET /v1/users/3');
    expect(api.seen[1]!.headers['content-length']).toBeUndefined();
    const d307 = decide({ path: 'items/307', method: 'POST' });
    const r307 = await sendOutbound(d307, { maxResponseBytes: 4096, timeoutMs: 3000, lookup, body: 'abc' });
    expect(new TextDecoder().decode(r307.body)).toBe('final POST /v1/items/echo');
    expect(api.seen.at(-1)).toMatchObject({ method: 'POST', body: 'abc' });
  });

  it('returns a 3xx without Location (304) as is', async () => {
    const res = await send(decide({ path: 'users/304' }));
    expect(res).toMatchObject({ status: 304, redirects: 0 });
  });
});
