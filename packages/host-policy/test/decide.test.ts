import { describe, expect, it } from 'vitest';
import { checkOutboundCall, compileHostPolicy, MAX_HEADERS } from '../src/index.js';
import { H1 } from './fixtures.js';

const policy = compileHostPolicy([
  H1,
  { id: 'open', host: 'https://open.example.com/' },
  {
    id: 'idp',
    host: 'https://login.example.com',
    authenticationHost: true,
    allowList: [{ method: 'POST', uriPattern: '/oauth2/token' }],
  },
  { id: 'idp2', host: 'https://login2.example.com', authenticationHost: 'true' },
  {
    id: 'inproc',
    transport: 'inProc',
    inProcServerId: 'api',
    allowList: [{ method: 'GET', uriPattern: '/status' }],
  },
]);

describe('checkOutboundCall', () => {
  it('S27: allows GET users/42 on h1 with the fixed headers, method upper case', () => {
    const d = checkOutboundCall(policy, { hostId: 'h1', path: 'users/42', method: 'get' });
    expect(d).toMatchObject({
      allowed: true,
      hostId: 'h1',
      url: 'https://api.example.com/v1/users/42',
      pathname: '/v1/users/42',
      search: '',
      method: 'GET',
      droppedHeaders: [],
    });
    if (d.allowed)
      expect({ ...d.headers }).toEqual({ authorization: 'Bearer fixed-secret-token', 'x-tenant': 'eu-1' });
  });

  it('S28: refuses DELETE users/42 with POLICY_METHOD_NOT_ALLOWED', () => {
    expect(checkOutboundCall(policy, { hostId: 'h1', path: 'users/42', method: 'DELETE' })).toEqual({
      allowed: false,
      code: 'POLICY_METHOD_NOT_ALLOWED',
      hostId: 'h1',
      rule: 'allow-list-method',
      message: 'host h1: no allowList entry allows this method here',
    });
  });

  it('S28: refuses a method the allowList names for another path only, and unknown methods', () => {
    expect(checkOutboundCall(policy, { hostId: 'h1', path: 'items', method: 'GET' })).toMatchObject({
      code: 'POLICY_METHOD_NOT_ALLOWED',
    });
    for (const method of [
      'TRACE',
      'CONNECT',
      'GET ',
      'PROPFIND',
      '',
      'GETX',
      'optıons',
      'poſt',
      'GET\u0000',
    ]) {
      expect(checkOutboundCall(policy, { hostId: 'open', path: 'x', method })).toMatchObject({
        code: 'POLICY_METHOD_NOT_ALLOWED',
        rule: 'method-unsupported',
      });
    }
  });

  it('S29: refuses GET users/abc with POLICY_PATH_NOT_ALLOWED', () => {
    expect(checkOutboundCall(policy, { hostId: 'h1', path: 'users/abc', method: 'GET' })).toMatchObject({
      allowed: false,
      code: 'POLICY_PATH_NOT_ALLOWED',
      rule: 'allow-list-path',
      hostId: 'h1',
    });
  });

  it('S30: matches the whole path: users/42/x, xusers/42 and users/42?q are judged on the pathname', () => {
    const code = (path: string) => {
      const d = checkOutboundCall(policy, { hostId: 'h1', path, method: 'GET' });
      return d.allowed ? 'ALLOWED' : d.code;
    };
    expect(code('users/42/x')).toBe('POLICY_PATH_NOT_ALLOWED');
    expect(code('users/42/')).toBe('POLICY_PATH_NOT_ALLOWED');
    expect(code('x/users/42')).toBe('POLICY_PATH_NOT_ALLOWED');
    expect(code('users/42?anything=/v1/admin')).toBe('ALLOWED');
    expect(code('items')).toBe('POLICY_METHOD_NOT_ALLOWED');
  });

  it('compares methods case-insensitively against the allowList', () => {
    for (const method of ['post', 'Post', 'POST']) {
      expect(checkOutboundCall(policy, { hostId: 'h1', path: 'items', method })).toMatchObject({
        allowed: true,
        method: 'POST',
      });
    }
  });

  it('allows every method and path without an allowList', () => {
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      expect(checkOutboundCall(policy, { hostId: 'open', path: 'any/thing', method })).toMatchObject({
        allowed: true,
      });
    }
  });

  it('refuses an unknown host id with POLICY_HOST_UNKNOWN; ids are exact (no case folding, no trimming)', () => {
    for (const hostId of ['nope', 'H1', 'h1 ', ' h1', '__proto__', 'constructor']) {
      expect(checkOutboundCall(policy, { hostId, path: 'users/1', method: 'GET' })).toMatchObject({
        allowed: false,
        code: 'POLICY_HOST_UNKNOWN',
        hostId,
        rule: 'host-id',
      });
    }
  });

  it('S42: refuses an authentication host from an ordinary processor with POLICY_HOST_NOT_ALLOWED', () => {
    for (const hostId of ['idp', 'idp2']) {
      expect(checkOutboundCall(policy, { hostId, path: 'oauth2/token', method: 'POST' })).toMatchObject({
        code: 'POLICY_HOST_NOT_ALLOWED',
        rule: 'authentication-host',
      });
      expect(
        checkOutboundCall(policy, {
          hostId,
          path: 'oauth2/token',
          method: 'POST',
          isAuthenticationProcessor: false,
        }),
      ).toMatchObject({ code: 'POLICY_HOST_NOT_ALLOWED' });
    }
  });

  it('S42: allows the same call from the authentication processor', () => {
    expect(
      checkOutboundCall(policy, {
        hostId: 'idp',
        path: 'oauth2/token',
        method: 'POST',
        isAuthenticationProcessor: true,
      }),
    ).toMatchObject({ allowed: true, url: 'https://login.example.com/oauth2/token' });
  });

  it('decides inProc hosts on the same rules with base path /', () => {
    expect(checkOutboundCall(policy, { hostId: 'inproc', path: 'status', method: 'GET' })).toMatchObject({
      allowed: true,
      transport: 'inProc',
      url: '/status',
    });
    expect(checkOutboundCall(policy, { hostId: 'inproc', path: '../x', method: 'GET' })).toMatchObject({
      code: 'POLICY_PATH_ESCAPES_BASE',
    });
  });

  it('throws TypeError for a policy that was not compiled or a missing call', () => {
    expect(() => checkOutboundCall({} as never, { hostId: 'h1', path: '', method: 'GET' })).toThrow(
      TypeError,
    );
    expect(() => checkOutboundCall(policy, null as never)).toThrow(TypeError);
  });
});

describe('checkOutboundCall headers', () => {
  const call = (headers: Record<string, string>) =>
    checkOutboundCall(policy, { hostId: 'h1', path: 'users/1', method: 'GET', headers });

  it.each(['Host', 'host', 'HOST'])(
    'S36: refuses a workflow %s header with POLICY_HEADER_FORBIDDEN',
    (name) => {
      expect(call({ [name]: 'internal.svc' })).toMatchObject({
        code: 'POLICY_HEADER_FORBIDDEN',
        rule: 'header-forbidden',
      });
    },
  );

  it.each([
    'Connection',
    'Keep-Alive',
    'Proxy-Authorization',
    'Proxy-Connection',
    'proxy-anything',
    'TE',
    'Trailer',
    'Transfer-Encoding',
    'Upgrade',
    'Content-Length',
    'Expect',
  ])('S36: refuses the hop-by-hop or framing header %s', (name) => {
    expect(call({ [name]: 'x' })).toMatchObject({ code: 'POLICY_HEADER_FORBIDDEN' });
  });

  it('S37: keeps the fixed Authorization and drops the workflow one, names compared case-insensitively', () => {
    for (const name of ['authorization', 'AUTHORIZATION', 'Authorization']) {
      const d = call({ [name]: 'Bearer attacker', 'X-Request-Id': 'r1' });
      expect(d).toMatchObject({ allowed: true, droppedHeaders: ['authorization'] });
      if (d.allowed) {
        expect(d.headers['authorization']).toBe('Bearer fixed-secret-token');
        expect(d.headers['x-request-id']).toBe('r1');
        expect(Object.values(d.headers)).not.toContain('Bearer attacker');
      }
    }
  });

  it.each([
    ['CRLF in a value', { 'X-A': 'v\r\nX-Injected: 1' }, 'header-value'],
    ['LF in a value', { 'X-A': 'v\nx' }, 'header-value'],
    ['TAB in a value', { 'X-A': 'v\tx' }, 'header-value'],
    ['NUL in a value', { 'X-A': 'v\u0000' }, 'header-value'],
    ['a character above U+00FF', { 'X-A': '\u2028' }, 'header-value'],
    ['a space in a name', { 'X A': 'v' }, 'header-name'],
    ['CRLF in a name', { 'X-A\r\nX-B': 'v' }, 'header-name'],
    ['a colon in a name', { 'X-A:': 'v' }, 'header-name'],
    ['an empty name', { '': 'v' }, 'header-name'],
    ['a pseudo-header', { ':authority': 'evil' }, 'header-name'],
    ['a duplicate under case folding', { 'x-a': '1', 'X-A': '2' }, 'header-duplicate'],
  ])('S35: refuses %s with POLICY_HEADER_INVALID', (_name, headers, rule) => {
    expect(call(headers)).toMatchObject({
      allowed: false,
      code: 'POLICY_HEADER_INVALID',
      rule,
      hostId: 'h1',
    });
  });

  it('refuses non-string values, too many headers and a non-object header map', () => {
    expect(call({ 'X-A': 1 as unknown as string })).toMatchObject({ code: 'POLICY_HEADER_INVALID' });
    expect(call({ 'X-A': 'x'.repeat(8193) })).toMatchObject({ code: 'POLICY_HEADER_INVALID' });
    const many = Object.fromEntries(Array.from({ length: MAX_HEADERS + 1 }, (_, i) => [`x-${i}`, 'v']));
    expect(call(many)).toMatchObject({ code: 'POLICY_HEADER_INVALID', rule: 'header-count' });
    expect(call([] as unknown as Record<string, string>)).toMatchObject({ code: 'POLICY_HEADER_INVALID' });
  });

  it('never puts a header value into the denial message', () => {
    const d = call({ 'X-A': 'secret\r\n' });
    expect(JSON.stringify(d)).not.toContain('secret');
  });

  it('returns headers without a prototype so __proto__ is an ordinary name', () => {
    const d = call(JSON.parse('{"__proto__":"x"}') as Record<string, string>);
    expect(d.allowed).toBe(true);
    if (d.allowed) expect(Object.getOwnPropertyNames(d.headers)).toContain('__proto__');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
