import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostPolicy, OutboundCall, OutboundResponse } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, PolicyError, sendOutbound } from '../src/index.js';
import type { TestServer } from './fixtures.js';
import { fakeLookup, h1At, startServer } from './fixtures.js';

// The whole egress path as the agent runs it: decide, then send only what was allowed. "Rejected" means the
// call fails with the code and nothing is resolved or connected (docs/security-requirements.md Part B conventions).

let server: TestServer;
let policy: HostPolicy;
const lookup = fakeLookup({ 'api.example.test': ['127.0.0.1'], 'evil.com': ['127.0.0.1'] });

beforeAll(async () => {
  server = await startServer();
  policy = compileHostPolicy(
    [
      h1At(server.port),
      {
        ...h1At(server.port),
        id: 'h1-noslash',
        host: `http://api.example.test:${server.port}/v1`,
        allowList: undefined,
      },
      { ...h1At(server.port), id: 'auth', authenticationHost: true, allowList: undefined },
    ],
    { allowPrivateNetwork: ['h1', 'h1-noslash', 'auth'] },
  );
});
afterAll(() => server.close());

async function egress(call: Partial<OutboundCall>): Promise<OutboundResponse> {
  const d = checkOutboundCall(policy, { hostId: 'h1', path: 'users/42', method: 'GET', ...call });
  if (!d.allowed) throw new PolicyError(d.code, d.message, { details: { hostId: d.hostId, rule: d.rule } });
  return sendOutbound(d, { maxResponseBytes: 1024, timeoutMs: 3000, lookup });
}

const CASES: [string, Partial<OutboundCall>, string][] = [
  ['S28', { method: 'DELETE' }, 'POLICY_METHOD_NOT_ALLOWED'],
  ['S29', { path: 'users/abc' }, 'POLICY_PATH_NOT_ALLOWED'],
  ['S30', { path: 'admin/x?y=/v1/users/1' }, 'POLICY_PATH_NOT_ALLOWED'],
  ['S30', { path: 'users/1/../../admin' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S31', { path: '../admin' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S31', { path: '%2e%2e/admin' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S31', { path: '.%2e/admin' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S31', { path: '%2E%2E/admin' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S31', { path: 'users/%2e%2e/%2e%2e/admin' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S32', { path: '//evil.com/x' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S32', { path: '\\\\evil.com/x' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S32', { path: '/\\evil.com' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S33', { path: 'https://evil.com/' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S33', { path: 'http:evil.com' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S33', { path: 'javascript:alert(1)' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S34', { hostId: 'h1-noslash', path: '@evil.com/x' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S34', { hostId: 'h1-noslash', path: '.evil.com/x' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S34', { hostId: 'h1-noslash', path: ':8443/x' }, 'POLICY_PATH_ESCAPES_BASE'],
  ['S35', { path: 'users/1\r\nX-Injected: 1' }, 'POLICY_PATH_INVALID'],
  ['S35', { path: 'users/1\tX-Injected: 1' }, 'POLICY_PATH_INVALID'],
  ['S35', { path: 'users/1\u0000X-Injected: 1' }, 'POLICY_PATH_INVALID'],
  ['S35', { headers: { 'X-A': '1\r\nX-Injected: 1' } }, 'POLICY_HEADER_INVALID'],
  ['S36', { headers: { Host: 'internal.svc' } }, 'POLICY_HEADER_FORBIDDEN'],
  ['S42', { hostId: 'auth' }, 'POLICY_HOST_NOT_ALLOWED'],
  ['—', { hostId: 'H1' }, 'POLICY_HOST_UNKNOWN'],
];

describe('egress end to end', () => {
  it.each(CASES)(
    '%s: %j is rejected with %s; nothing resolved or connected; the next call succeeds',
    async (_s, call, code) => {
      const [asked, connections] = [lookup.asked.length, server.connections];
      await expect(egress(call)).rejects.toThrowCode(PolicyError, code);
      expect(lookup.asked.length).toBe(asked);
      expect(server.connections).toBe(connections);
      expect((await egress({})).status).toBe(200);
      expect(lookup.asked).not.toContain('evil.com');
    },
  );

  it('S27: GET users/42 reaches /v1/users/42 with the fixed headers', async () => {
    const before = server.seen.length;
    expect((await egress({})).status).toBe(200);
    expect(server.seen[before]).toMatchObject({
      method: 'GET',
      url: '/v1/users/42',
      headers: { authorization: 'Bearer fixed-secret-token', 'x-tenant': 'eu-1' },
    });
  });

  it('S42: the authentication host is reachable from the authentication processor', async () => {
    expect(
      (
        await egress({
          hostId: 'auth',
          path: 'oauth2/token',
          method: 'POST',
          isAuthenticationProcessor: true,
        })
      ).status,
    ).toBe(200);
  });
});
