import { describe, expect, it } from 'vitest';
import { REDACTED, createWorkflowEngine } from '../src/index.js';
import { codedError, fakeHost, input, textResponse, workflow } from './fake-host.js';

const SECRET = 'notExfiltratedAbc123';
const RESTRICTED = JSON.stringify({ clientId: 'client-1', clientSecret: SECRET });
const s = (script: string) => ({ script });

async function setup(
  step: Record<string, unknown>,
  restricted: Record<string, string | Error> = { idp: RESTRICTED },
) {
  const host = fakeHost({
    restricted,
    respond: (req) => textResponse(200, req.isAuthenticationProcessor ? 'tok-ABCDEFGH' : 'main'),
  });
  const engine = await createWorkflowEngine(
    workflow([
      { stepId: 'a', ...step },
      { stepId: 'other', resultsProcessor: s('') },
    ]),
    {
      host,
      data: {},
    },
  );
  return { host, engine };
}

function everything(host: ReturnType<typeof fakeHost>, result: unknown): string {
  return JSON.stringify([host.logs, host.metrics, result]);
}

describe('getRestrictedDataFromHost (docs/interfaces.md §5.5, S46)', () => {
  it('returns host data in an authentication processor and registers every value as a secret', async () => {
    const { host, engine } = await setup({
      authenticationProcessor: s(
        "context.callAuthenticationHost('idp', '/token', { body: context.getRestrictedDataFromHost('idp') })",
      ),
    });
    const result = await engine.runStep('a', input());
    expect(result.errored).toBe(false);
    expect(host.restrictedCalls).toEqual(['idp']);
    expect(host.calls[0]?.body).toBe(RESTRICTED);
    expect(host.secrets).toEqual(expect.arrayContaining([SECRET, 'client-1', RESTRICTED]));
  });

  it('refuses the call outside an authentication processor with ENGINE_NOT_PERMITTED, without asking the host', async () => {
    const { host, engine } = await setup({ resultsProcessor: s("context.getRestrictedDataFromHost('idp')") });
    const result = await engine.runStep('a', input());
    expect(result.errored).toBe(true);
    expect(result.errors[0]).toContain('ENGINE_NOT_PERMITTED');
    expect(host.restrictedCalls).toEqual([]);
  });

  it('reports a decryption failure at the call, naming host and field, and keeps running', async () => {
    const failure = codedError('CRYPTO_AUTH_FAILED', 'cannot decrypt data.clientSecret of host idp');
    const { host, engine } = await setup(
      {
        authenticationProcessor: s(
          "try { context.getRestrictedDataFromHost('idp') } catch (e) { console.log(e.code + ' | ' + e.message) } context.getRestrictedDataFromHost('idp')",
        ),
      },
      { idp: failure },
    );
    const result = await engine.runStep('a', input());
    expect(host.logs[0]?.message).toBe(
      'CRYPTO_AUTH_FAILED | CRYPTO_AUTH_FAILED: cannot decrypt data.clientSecret of host idp',
    );
    expect(result.errors).toEqual([
      'authenticationProcessor: CRYPTO_AUTH_FAILED: cannot decrypt data.clientSecret of host idp',
    ]);
    expect((await engine.runStep('other', input())).errored).toBe(false);
  });

  it('scrubs restricted values (and their Base64) from errors, logs and metrics (S50)', async () => {
    const { host, engine } = await setup({
      authenticationProcessor: s(`
        const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
        console.log('this is ' + d.clientSecret);
        context.diagnosticLog(context.bytes().binaryToBase64(context.bytes().createFromString(d.clientSecret)));
        context.sendMetric('m' + d.clientSecret, 1, { ['k' + d.clientSecret]: d.clientSecret });
        throw new Error('failed with ' + d.clientSecret);`),
    });
    const result = await engine.runStep('a', input());
    expect(everything(host, result)).not.toContain(SECRET);
    expect(everything(host, result)).not.toContain(Buffer.from(SECRET).toString('base64').replace(/=+$/, ''));
    expect(host.logs[0]?.message).toBe(`this is ${REDACTED}`);
    expect(host.metrics[0]).toMatchObject({ key: 'm', dimensions: { k: '' } });
    expect(result.errors).toEqual([`authenticationProcessor: failed with ${REDACTED}`]);
  });
});

describe('authentication processor', () => {
  it('sends its headers on the main call only, registered as secrets and hidden from later processors', async () => {
    const { host, engine } = await setup({
      urlGenerator: s("context.setUrl('api', '/x')"),
      authenticationProcessor: s("context.setHeader('Authorization', 'Bearer sEcReTtOkEn')"),
      resultsProcessor: s(
        "context.setBody(String(context.getHeader('authorization'))); context.setHeader('X-Out', '1')",
      ),
    });
    const result = await engine.runStep('a', input());
    expect(host.calls[0]?.headers).toEqual({ Authorization: 'Bearer sEcReTtOkEn' });
    expect(host.secrets).toEqual(expect.arrayContaining(['Bearer sEcReTtOkEn', 'sEcReTtOkEn']));
    expect(result).toMatchObject({ body: 'null', headers: { 'X-Out': '1' } });
  });

  it('S50: redacts a header value in a log line written by the same processor right after setHeader', async () => {
    const { host, engine } = await setup({
      urlGenerator: s("context.setUrl('api', '/x')"),
      authenticationProcessor: s(
        "context.setHeader('Authorization', 'Bearer sEcReTtOkEn2'); console.log('header set: ' + context.getHeader('authorization'))",
      ),
      resultsProcessor: s(''),
    });
    await engine.runStep('a', input());
    expect(host.logs.map((l) => l.message)).toEqual([`header set: ["${REDACTED}"]`]);
    expect(everything(host, null)).not.toContain('sEcReTtOkEn2');
  });

  it('scrubs an authentication header from a refused call error (S50)', async () => {
    const host = fakeHost({
      respond: (req) =>
        Promise.reject(
          codedError('POLICY_HEADER_FORBIDDEN', `refused header ${req.headers['Authorization'] ?? ''}`),
        ),
    });
    const wf = workflow([
      {
        stepId: 'a',
        urlGenerator: s("context.setUrl('api', '/x')"),
        authenticationProcessor: s("context.setHeader('Authorization', 'Bearer sEcReTtOkEn')"),
      },
    ]);
    const engine = await createWorkflowEngine(wf, { host, data: {} });
    const result = await engine.runStep('a', input());
    expect(result.errors).toEqual([`POLICY_HEADER_FORBIDDEN: refused header ${REDACTED}`]);
  });

  it('makes its own call to an authentication host with isAuthenticationProcessor true', async () => {
    const { host, engine } = await setup({
      urlGenerator: s("context.setUrl('api', '/x')"),
      authenticationProcessor: s(`
        const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
        const r = context.callAuthenticationHost('idp', '/oauth2/token', { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(d) });
        context.setAuthenticationPropertiesOnStep('a', 60000, 'token', JSON.stringify({ t: r.getBody(), s: r.getStatus() }));
        context.setHeader('Authorization', 'Bearer ' + r.getBody());`),
      resultsProcessor: s('context.setBody(context.getBody())'),
    });
    const result = await engine.runStep('a', input());
    expect(host.calls.map((c) => [c.hostId, c.method, c.isAuthenticationProcessor])).toEqual([
      ['idp', 'POST', true],
      ['api', 'GET', false],
    ]);
    expect(host.calls[0]?.body).toBe(RESTRICTED);
    expect(host.calls[1]?.headers).toEqual({ Authorization: 'Bearer tok-ABCDEFGH' });
    expect(result.body).toBe('main');
  });

  it('refuses callAuthenticationHost outside an authentication processor', async () => {
    const { host, engine } = await setup({
      resultsProcessor: s("context.callAuthenticationHost('idp', '/t')"),
    });
    const result = await engine.runStep('a', input());
    expect(result.errors[0]).toContain('ENGINE_NOT_PERMITTED');
    expect(host.calls).toEqual([]);
  });

  it('refuses a main call that would carry restricted data to another host', async () => {
    const { host, engine } = await setup({
      urlGenerator: s("context.setUrl('api', '/x')"),
      authenticationProcessor: s(
        "context.setHeader('X-Key', JSON.parse(context.getRestrictedDataFromHost('idp')).clientSecret)",
      ),
    });
    const result = await engine.runStep('a', input());
    expect(host.calls).toEqual([]);
    expect(result.errors).toEqual([
      'ENGINE_NOT_PERMITTED: the call would carry restricted host data to another host',
    ]);
  });

  it('discards the body, properties and URL an authentication processor sets', async () => {
    const { host, engine } = await setup({
      authenticationProcessor: s(
        "context.setBody(context.getRestrictedDataFromHost('idp')); context.setProperty('status_code', 200); context.setUrl('idp', '/leak')",
      ),
      resultsProcessor: s("context.setBody('[' + context.getBody() + ']')"),
    });
    const result = await engine.runStep('a', input('in'));
    expect(host.calls).toEqual([]);
    expect(result).toMatchObject({ body: '[in]', status: undefined, errored: false });
  });

  it('caches authentication properties with a TTL, readable only in an authentication context', async () => {
    const { engine } = await setup({
      authenticationProcessor: s(`
        context.setAuthenticationPropertiesOnStep('a', 1000, 'n', '{"k":1}');
        context.setAuthenticationPropertiesOnStep('a', 0, 'gone', 'x');
        context.addSystemError(String(context.getAuthenticationPropertiesFromStep('a', 'n') === '{"k":1}') + ' ' + context.getAuthenticationPropertiesFromStep('a', 'gone'));`),
    });
    expect((await engine.runStep('a', input())).errors).toEqual(['true null']);
    const { engine: plain } = await setup({
      resultsProcessor: s("context.getAuthenticationPropertiesFromStep('a', 'n')"),
    });
    expect((await plain.runStep('a', input())).errors[0]).toContain('ENGINE_NOT_PERMITTED');
  });

  it('runs every processor of a scripted-auth step in authentication context', async () => {
    const { host, engine } = await setup({
      type: 'scripted-auth',
      urlGenerator: s(
        "context.setUrl('idp', '/token'); context.setHeader('Authorization', 'Basic ' + JSON.parse(context.getRestrictedDataFromHost('idp')).clientSecret)",
      ),
      resultsProcessor: s(
        "context.setAuthenticationPropertiesOnStep('a', 60000, 'token', context.getBody()); context.setBody('token is ' + context.getBody() + ' for ' + JSON.parse(context.getRestrictedDataFromHost('idp')).clientSecret)",
      ),
    });
    const result = await engine.runStep('a', input());
    expect(host.calls[0]).toMatchObject({
      hostId: 'idp',
      isAuthenticationProcessor: true,
      headers: { Authorization: `Basic ${SECRET}` },
    });
    expect(result.body).toBe(`token is ${REDACTED} for ${REDACTED}`);
  });

  it('may not call sendToStep', async () => {
    const { engine } = await setup({ authenticationProcessor: s("context.sendToStep('other', 'x')") });
    const result = await engine.runStep('a', input());
    expect(result.errors[0]).toContain('ENGINE_NOT_PERMITTED');
  });
});
