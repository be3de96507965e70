import { describe, expect, it } from 'vitest';
import type { HostEntry, LegacyHostsMap } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, convertLegacyHosts, PolicyError } from '../src/index.js';
import { H1 } from './fixtures.js';

const compileOne = (entry: Record<string, unknown>) => compileHostPolicy([entry] as unknown as HostEntry[]);

describe('compileHostPolicy', () => {
  it('compiles h1 and keys hosts by exact id', () => {
    const policy = compileHostPolicy([H1, { id: 'H1', host: 'https://other.example.com/' }]);
    expect([...policy.hosts.keys()]).toEqual(['h1', 'H1']);
    const h1 = policy.hosts.get('h1')!;
    expect(h1.base).toMatchObject({
      origin: 'https://api.example.com',
      basePath: '/v1/',
      hasTrailingSlash: true,
      port: 443,
    });
  });

  it('normalises the host: letter case, trailing dot, default port', () => {
    const p = compileHostPolicy([{ id: 'a', host: 'HTTPS://API.Example.COM.:443/v1/' }]);
    expect(p.hosts.get('a')!.base).toMatchObject({
      origin: 'https://api.example.com',
      hostname: 'api.example.com',
    });
    const q = compileHostPolicy([{ id: 'b', host: 'http://api.example.com:8080' }]);
    expect(q.hosts.get('b')!.base).toMatchObject({
      origin: 'http://api.example.com:8080',
      port: 8080,
      basePath: '/',
    });
  });

  it.each([
    ['http://2130706433/', '127.0.0.1', 'loopback'],
    ['http://0x7f.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://0177.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://127.1/', '127.0.0.1', 'loopback'],
    ['http://127.0.0.1./', '127.0.0.1', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/', '[::1]', 'loopback'],
    ['http://[::ffff:a9fe:a9fe]/', '[::ffff:a9fe:a9fe]', 'metadata'],
    ['http://10.1/', '10.0.0.1', 'private'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]', 'loopback'],
    ['http://169.254.169.254/', '169.254.169.254', 'metadata'],
    ['http://8.8.8.8/', '8.8.8.8', 'public'],
  ])('S41: normalises %s to %s and classifies it as %s', (host, hostname, kind) => {
    const p = compileHostPolicy([{ id: 'x', host }]);
    expect(p.hosts.get('x')!.base).toMatchObject({ hostname, literalKind: kind });
  });

  it('S41: a loopback IP literal host is denied with POLICY_PRIVATE_ADDRESS unless opted in; metadata always', () => {
    const entries = [
      { id: 'lit', host: 'http://2130706433/' },
      { id: 'meta', host: 'http://[::ffff:a9fe:a9fe]/' },
    ];
    const denied = compileHostPolicy(entries);
    expect(checkOutboundCall(denied, { hostId: 'lit', path: 'x', method: 'GET' })).toMatchObject({
      allowed: false,
      code: 'POLICY_PRIVATE_ADDRESS',
      rule: 'address-policy',
    });
    const optedIn = compileHostPolicy(entries, { allowPrivateNetwork: ['lit', 'meta'] });
    expect(checkOutboundCall(optedIn, { hostId: 'lit', path: 'x', method: 'GET' })).toMatchObject({
      allowed: true,
      url: 'http://127.0.0.1/x',
    });
    expect(checkOutboundCall(optedIn, { hostId: 'meta', path: 'x', method: 'GET' })).toMatchObject({
      code: 'POLICY_PRIVATE_ADDRESS',
    });
  });

  it.each([
    ['ftp scheme', 'ftp://api.example.com/'],
    ['file scheme', 'file:///etc/passwd'],
    ['no scheme', 'api.example.com'],
    ['scheme without slashes', 'https:api.example.com'],
    ['userinfo', 'https://user:pw@api.example.com/'],
    ['empty userinfo', 'https://@api.example.com/'],
    ['query', 'https://api.example.com/v1?x=1'],
    ['empty query', 'https://api.example.com/v1?'],
    ['fragment', 'https://api.example.com/v1#x'],
    ['backslash', 'https://api.example.com\\v1'],
    ['space', 'https://api.example.com/v 1'],
    ['dot segment', 'https://api.example.com/v1/../admin'],
    ['encoded dot segment', 'https://api.example.com/v1/%2e%2e/admin'],
    ['encoded slash', 'https://api.example.com/v1%2fadmin'],
    ['double slash', 'https://api.example.com//v1'],
    ['port 0', 'https://api.example.com:0/'],
    ['bad port', 'https://api.example.com:99999/'],
    ['not a string', 42],
    ['too long', `https://api.example.com/${'a'.repeat(2048)}`],
  ])('refuses a base URL with %s (POLICY_CONFIG_INVALID on field host)', (_name, host) => {
    expect(() => compileOne({ id: 'x', host })).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
    try {
      compileOne({ id: 'x', host });
    } catch (err) {
      expect((err as PolicyError).details).toMatchObject({ hostId: 'x', index: 0, field: 'host' });
    }
  });

  it.each([
    ['a missing id', { host: 'https://a.example/' }, 'id'],
    ['an empty id', { id: '', host: 'https://a.example/' }, 'id'],
    [
      'an unknown field',
      { id: 'x', host: 'https://a.example/', allowPrivateNetwork: true },
      'allowPrivateNetwork',
    ],
    [
      'a bad authenticationHost',
      { id: 'x', host: 'https://a.example/', authenticationHost: '${AUTH}' },
      'authenticationHost',
    ],
    ['a bad httpTimeout', { id: 'x', host: 'https://a.example/', httpTimeout: -1 }, 'httpTimeout'],
    ['a non-object data', { id: 'x', host: 'https://a.example/', data: 'x' }, 'data'],
    ['a bad transport', { id: 'x', host: 'https://a.example/', transport: 'tcp' }, 'transport'],
    ['inProc without server id', { id: 'x', transport: 'inProc' }, 'inProcServerId'],
    [
      'inProc with host',
      { id: 'x', transport: 'inProc', inProcServerId: 's', host: 'https://a.example/' },
      'host',
    ],
    [
      'http with inProc fields',
      { id: 'x', host: 'https://a.example/', inProcServerId: 's' },
      'inProcServerId',
    ],
    ['a non-array allowList', { id: 'x', host: 'https://a.example/', allowList: {} }, 'allowList'],
    [
      'an allowList entry with extra fields',
      { id: 'x', host: 'https://a.example/', allowList: [{ method: 'GET', uriPattern: '/', x: 1 }] },
      'allowList[0]',
    ],
    [
      'an allowList method TRACE',
      { id: 'x', host: 'https://a.example/', allowList: [{ method: 'TRACE', uriPattern: '/' }] },
      'allowList[0].method',
    ],
    ['a fixed Host header', { id: 'x', host: 'https://a.example/', headers: { Host: 'b' } }, 'headers.Host'],
    [
      'a fixed header with CRLF',
      { id: 'x', host: 'https://a.example/', headers: { 'X-A': 'v\r\nX: 1' } },
      'headers.X-A',
    ],
    [
      'a fixed header with a bad name',
      { id: 'x', host: 'https://a.example/', headers: { 'X A': 'v' } },
      'headers.(invalid name)',
    ],
    [
      'duplicate fixed headers',
      { id: 'x', host: 'https://a.example/', headers: { 'X-A': '1', 'x-a': '2' } },
      'headers.x-a',
    ],
    [
      'a non-string fixed header',
      { id: 'x', host: 'https://a.example/', headers: { 'X-A': 1 } },
      'headers.X-A',
    ],
  ])('refuses %s with POLICY_CONFIG_INVALID naming the field', (_name, entry, field) => {
    expect(() => compileOne(entry)).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
    try {
      compileOne(entry);
    } catch (err) {
      expect((err as PolicyError).details).toMatchObject({ index: 0, field });
    }
  });

  it('never echoes a fixed header value in a configuration error', () => {
    try {
      compileOne({ id: 'x', host: 'https://a.example/', headers: { Authorization: 'Bearer s3cret\n' } });
      expect.unreachable();
    } catch (err) {
      expect(JSON.stringify({ m: (err as Error).message, d: (err as PolicyError).details })).not.toContain(
        's3cret',
      );
    }
  });

  it('refuses duplicate ids, non-object entries and a non-array non-object hosts value', () => {
    expect(() => compileHostPolicy([H1, H1])).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
    expect(() => compileHostPolicy(['h1'] as never)).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
    expect(() => compileHostPolicy('h1' as never)).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
    expect(() => compileHostPolicy(null as never)).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
  });

  it('refuses allowPrivateNetwork naming an unknown host; TypeError when it is not an array', () => {
    expect(() => compileHostPolicy([H1], { allowPrivateNetwork: ['H1'] })).toThrowCode(
      PolicyError,
      'POLICY_CONFIG_INVALID',
    );
    expect(() => compileHostPolicy([H1], { allowPrivateNetwork: 'h1' as never })).toThrow(TypeError);
  });

  it('accepts stringBoolean authenticationHost and does not keep restricted data', () => {
    const p = compileHostPolicy([
      { id: 'a', host: 'https://a.example/', authenticationHost: 'false', data: { secret: '-2/abc' } },
      { id: 'b', host: 'https://b.example/', authenticationHost: 'true' },
    ]);
    expect(p.hosts.get('a')!.authenticationHost).toBe(false);
    expect(p.hosts.get('b')!.authenticationHost).toBe(true);
    expect(JSON.stringify([...p.hosts.values()])).not.toContain('-2/abc');
  });
});

describe('legacy hosts map', () => {
  const legacy: LegacyHostsMap = {
    crm: {
      host: 'http://mockserver',
      headers: {},
      authenticationHost: true,
      allowlist: [
        ['GET', '/api/count'],
        ['POST', '/.*/oauth2/.*'],
      ],
      data: { authorization: 'Basic eA==' },
    },
  };

  it('converts the map with allowlist tuples into the array form', () => {
    expect(convertLegacyHosts(legacy)).toEqual([
      {
        id: 'crm',
        host: 'http://mockserver',
        headers: {},
        authenticationHost: true,
        allowList: [
          { method: 'GET', uriPattern: '/api/count' },
          { method: 'POST', uriPattern: '/.*/oauth2/.*' },
        ],
        data: { authorization: 'Basic eA==' },
      },
    ]);
  });

  it('compiles the legacy map and decides on it like the array form', () => {
    const p = compileHostPolicy(legacy);
    const ok = { hostId: 'crm', method: 'post', isAuthenticationProcessor: true };
    expect(checkOutboundCall(p, { ...ok, path: 'x/oauth2/token' })).toMatchObject({
      allowed: true,
      url: 'http://mockserver/x/oauth2/token',
    });
    expect(checkOutboundCall(p, { ...ok, path: 'api/count', method: 'GET' })).toMatchObject({
      allowed: true,
    });
    expect(checkOutboundCall(p, { ...ok, path: 'api/count2', method: 'GET' })).toMatchObject({
      code: 'POLICY_PATH_NOT_ALLOWED',
    });
  });

  it.each([
    ['a non-object entry', { crm: 'x' }],
    ['an unknown field', { crm: { host: 'http://a', allowList: [] } }],
    ['a non-array allowlist', { crm: { host: 'http://a', allowlist: {} } }],
    ['a tuple of three', { crm: { host: 'http://a', allowlist: [['GET', '/', 'x']] } }],
  ])('refuses %s with POLICY_CONFIG_INVALID', (_name, map) => {
    expect(() => compileHostPolicy(map as never)).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
  });
});
