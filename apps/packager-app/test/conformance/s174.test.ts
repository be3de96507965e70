// S174 on both front-ends (ADR 0140): with the same caller token records, the Express service and the agent hosting
// packager.oapp refuse a request without a token, with a wrong one, with one differing in its last byte and with
// one of another scope with the same 401/403 problem bytes and headers, serve a token of the scope alike, leave
// /health open, and write the token to none of their log lines.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { answers, codeOf, json, sampleWorkflow, useFrontEnds, type Req } from './harness.js';

/** A token as `oapp`/`@org/packager` make them, and its record. */
function callerToken(scopes: string, name: string): { token: string; record: string } {
  const token = `oappt_${randomBytes(32).toString('base64url')}`;
  return { token, record: `sha256:${createHash('sha256').update(token).digest('hex')} ${scopes} ${name}` };
}

const inspect = callerToken('inspect', 'inspector');
const keys = callerToken('key-gen', 'keys');
const f = useFrontEnds({ callerTokenHashes: [inspect.record, keys.record] });

const flipped = (t: string) => t.slice(0, -1) + (t.at(-1) === 'A' ? 'B' : 'A');
const hashReq = (authorization?: string) => (): Req => {
  const r = json('/workflow-hash', JSON.stringify(sampleWorkflow()));
  if (authorization !== undefined)
    r.init = { ...r.init, headers: { ...(r.init?.headers as Record<string, string>), authorization } };
  return r;
};

describe('S174 caller tokens on both front-ends', () => {
  it.each([
    ['no token', 's174-none', undefined, 401, 'REQUEST_UNAUTHENTICATED'],
    ['another scheme', 's174-basic', 'Basic aW5zcGVjdG9yOng=', 401, 'REQUEST_UNAUTHENTICATED'],
    [
      'a wrong token',
      's174-wrong',
      `Bearer ${callerToken('inspect', 'x').token}`,
      401,
      'REQUEST_UNAUTHENTICATED',
    ],
    [
      'a token differing in its last byte',
      's174-last',
      `Bearer ${flipped(inspect.token)}`,
      401,
      'REQUEST_UNAUTHENTICATED',
    ],
    ['a token of another scope', 's174-scope', `Bearer ${keys.token}`, 403, 'REQUEST_FORBIDDEN'],
  ] as const)('%s: the same refusal, byte for byte', async (_what, id, authorization, status, code) => {
    const { express, agent } = await answers(f, id, hashReq(authorization));
    expect({ status: express.status, code: codeOf(express) }).toEqual({ status, code });
    expect(express.headers['www-authenticate']).toMatch(/^Bearer realm="packager"/);
    expect(agent).toEqual(express);
  });

  it('a token of the scope is served alike; /health stays open', async () => {
    const ok = await answers(f, 's174-ok', hashReq(`Bearer ${inspect.token}`));
    expect(ok.express.status).toBe(200);
    expect(ok.agent).toEqual(ok.express);
    const health = await answers(f, 's174-health', () => ({ path: '/health' }));
    expect(health.express.status).toBe(200);
    expect(health.agent).toEqual(health.express);
  });

  it('the tokens reach no log line of either front-end', () => {
    const all = [...f.agentLines, ...f.expressLines].join('\n');
    expect(f.agentLines.length).toBeGreaterThan(0);
    for (const t of [inspect.token, keys.token, flipped(inspect.token)])
      expect(all).not.toContain(t.slice(6, 30));
  });
});
