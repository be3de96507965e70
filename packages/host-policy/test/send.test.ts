import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AllowedCall, HostPolicy, OutboundCall, SendOutboundOptions } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, PolicyError, sendOutbound } from '../src/index.js';
import type { TestServer } from './fixtures.js';
import { fakeLookup, h1At, startServer } from './fixtures.js';

let server: TestServer;
let lookup: ReturnType<typeof fakeLookup>;
let policy: HostPolicy;

beforeEach(async () => {
  server = await startServer((req, res, body) => {
    if (req.url === '/v1/slow') return; // never answers
    res.setHeader('x-echo', 'yes');
    res.end(`you sent ${req.method} ${req.url} ${body}`);
  });
  lookup = fakeLookup({ 'api.example.test': ['127.0.0.1'] });
  policy = compileHostPolicy(
    [h1At(server.port, { allowList: undefined }), { id: 'down', host: 'http://down.example.test:1/' }],
    { allowPrivateNetwork: ['h1', 'down'] },
  );
});
afterEach(() => server.close());

function allowed(call: Partial<OutboundCall>, p = policy): AllowedCall {
  const d = checkOutboundCall(p, { hostId: 'h1', path: 'users/42', method: 'GET', ...call });
  if (!d.allowed) throw new Error(`expected allowed, got ${d.code}`);
  return d;
}

const opts = (extra: Partial<SendOutboundOptions> = {}): SendOutboundOptions => ({
  maxResponseBytes: 1 << 20,
  timeoutMs: 5000,
  lookup,
  ...extra,
});

describe('sendOutbound', () => {
  it('S27: sends GET users/42 to /v1/users/42 with the fixed headers and the configured Host', async () => {
    const res = await sendOutbound(allowed({}), opts());
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(res.body)).toBe('you sent GET /v1/users/42 ');
    expect(res.headers['x-echo']).toEqual(['yes']);
    expect(res).toMatchObject({ url: `http://api.example.test:${server.port}/v1/users/42`, redirects: 0 });
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.headers).toMatchObject({
      host: `api.example.test:${server.port}`,
      authorization: 'Bearer fixed-secret-token',
      'x-tenant': 'eu-1',
    });
    expect(lookup.asked).toEqual(['api.example.test']);
  });

  it('S36: the upstream sees the configured host; a workflow Host header never reaches it', async () => {
    const d = checkOutboundCall(policy, {
      hostId: 'h1',
      path: 'x',
      method: 'GET',
      headers: { Host: 'internal.svc' },
    });
    expect(d).toMatchObject({ allowed: false, code: 'POLICY_HEADER_FORBIDDEN' });
    await sendOutbound(allowed({ path: 'x' }), opts());
    expect(server.seen.map((s) => s.headers.host)).toEqual([`api.example.test:${server.port}`]);
  });

  it('S37: the upstream receives the fixed Authorization, not the workflow one', async () => {
    const d = allowed({ headers: { authorization: 'Bearer attacker', 'x-extra': '1' } });
    await sendOutbound(d, opts());
    expect(server.seen[0]!.headers['authorization']).toBe('Bearer fixed-secret-token');
    expect(server.seen[0]!.headers['x-extra']).toBe('1');
    expect(JSON.stringify(server.seen[0]!.headers)).not.toContain('attacker');
  });

  it('sends a body with its content-length and the method upper case', async () => {
    const res = await sendOutbound(allowed({ method: 'post', path: 'items' }), opts({ body: 'héllo' }));
    expect(new TextDecoder().decode(res.body)).toBe('you sent POST /v1/items héllo');
    expect(server.seen[0]!.headers['content-length']).toBe('6');
    await sendOutbound(allowed({ method: 'PUT', path: 'items' }), opts({ body: new Uint8Array([104, 105]) }));
    expect(server.seen[1]!.body).toBe('hi');
  });

  it('S35: a path with CRLF never produces a request', () => {
    const d = checkOutboundCall(policy, { hostId: 'h1', path: 'users/1\r\nX-Injected: 1', method: 'GET' });
    expect(d).toMatchObject({ code: 'POLICY_PATH_INVALID' });
    expect(server.connections).toBe(0);
  });

  it('ends a call that takes too long with POLICY_TIMEOUT; the next call succeeds', async () => {
    const p = sendOutbound(allowed({ path: 'slow' }), opts({ timeoutMs: 150 }));
    await expect(p).rejects.toThrowCode(PolicyError, 'POLICY_TIMEOUT');
    await p.catch((e: PolicyError) =>
      expect(e.details).toMatchObject({ hostId: 'h1', rule: 'total-timeout' }),
    );
    expect((await sendOutbound(allowed({}), opts())).status).toBe(200);
  });

  it('counts DNS time against the total timeout', async () => {
    const hanging = () => new Promise<never>(() => undefined);
    await expect(sendOutbound(allowed({}), opts({ timeoutMs: 100, lookup: hanging }))).rejects.toThrowCode(
      PolicyError,
      'POLICY_TIMEOUT',
    );
    expect(server.connections).toBe(0);
  });

  it('uses the host httpTimeout when the call sets none', async () => {
    const p2 = compileHostPolicy([h1At(server.port, { allowList: undefined, httpTimeout: 100 })], {
      allowPrivateNetwork: ['h1'],
    });
    await expect(
      sendOutbound(allowed({ path: 'slow' }, p2), opts({ timeoutMs: undefined })),
    ).rejects.toThrowCode(PolicyError, 'POLICY_TIMEOUT');
  });

  it('reports a refused connection as POLICY_CONNECT_FAILED naming the host', async () => {
    const d = checkOutboundCall(policy, { hostId: 'down', path: 'x', method: 'GET' });
    const l = fakeLookup({ 'down.example.test': ['127.0.0.1'] });
    const p = sendOutbound(d as AllowedCall, opts({ lookup: l }));
    await expect(p).rejects.toThrowCode(PolicyError, 'POLICY_CONNECT_FAILED');
    await p.catch((e: PolicyError) => expect(e.details).toMatchObject({ hostId: 'down', rule: 'connect' }));
  });

  it('reports a name that does not resolve as POLICY_CONNECT_FAILED (dns), and an empty answer too', async () => {
    await expect(sendOutbound(allowed({}), opts({ lookup: fakeLookup({}) }))).rejects.toThrowCode(
      PolicyError,
      'POLICY_CONNECT_FAILED',
    );
    await expect(sendOutbound(allowed({}), opts({ lookup: () => Promise.resolve([]) }))).rejects.toThrowCode(
      PolicyError,
      'POLICY_CONNECT_FAILED',
    );
    expect(server.connections).toBe(0);
  });

  it('rejects with the caller abort reason', async () => {
    const ac = new AbortController();
    const p = sendOutbound(allowed({ path: 'slow' }), opts({ signal: ac.signal }));
    setTimeout(() => ac.abort(new Error('caller gave up')), 50);
    await expect(p).rejects.toThrow('caller gave up');
    const pre = new AbortController();
    pre.abort(new Error('already'));
    await expect(sendOutbound(allowed({}), opts({ signal: pre.signal }))).rejects.toThrow('already');
  });

  it('throws TypeError for a denied or inProc decision and RangeError for bad limits', async () => {
    const denied = checkOutboundCall(policy, { hostId: 'nope', path: '', method: 'GET' });
    await expect(sendOutbound(denied as unknown as AllowedCall, opts())).rejects.toThrow(TypeError);
    const inproc = compileHostPolicy([{ id: 'i', transport: 'inProc', inProcServerId: 's' }]);
    const d = checkOutboundCall(inproc, { hostId: 'i', path: '', method: 'GET' }) as AllowedCall;
    await expect(sendOutbound(d, opts())).rejects.toThrow(TypeError);
    await expect(sendOutbound(allowed({}), opts({ maxResponseBytes: -1 }))).rejects.toThrow(RangeError);
    await expect(sendOutbound(allowed({}), opts({ timeoutMs: 0 }))).rejects.toThrow(RangeError);
    await expect(sendOutbound(allowed({}), opts({ maxRedirects: 6 }))).rejects.toThrow(RangeError);
  });

  it('re-checks a tampered decision URL before connecting (final URL check)', async () => {
    const d = allowed({});
    const forged = { ...d, url: 'http://evil.example.test/v1/users/42' };
    await expect(sendOutbound(forged, opts())).rejects.toThrowCode(PolicyError, 'POLICY_PATH_ESCAPES_BASE');
    expect(lookup.asked).toEqual([]);
  });
});
