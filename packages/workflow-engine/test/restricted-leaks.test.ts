import { describe, expect, it } from 'vitest';
import { createWorkflowEngine, type OutboundRequest } from '../src/index.js';
import { fakeHost, input, textResponse, workflow } from './fake-host.js';

// Regression cases from a security review of the authentication flows (ADR 0054): restricted data must not leave
// through a byte body, a header name or callAuthenticationHost (S122, docs/security-requirements.md A.2).
const SECRET = 'client-secret-Zq81xW';
const RESTRICTED = JSON.stringify({ clientId: 'client-1', clientSecret: SECRET });
const s = (script: string) => ({ script });

function setup(steps: unknown[]) {
  const calls: OutboundRequest[] = [];
  const host = fakeHost({
    restricted: { idp: RESTRICTED },
    respond: (req) => {
      calls.push(req);
      return textResponse(200, 'ok');
    },
  });
  return { calls, engine: createWorkflowEngine(workflow(steps), { host, data: {} }) };
}

const asText = (b: string | Uint8Array | undefined) =>
  b instanceof Uint8Array ? new TextDecoder().decode(b) : (b ?? '');

describe('restricted data and byte bodies', () => {
  it('S122: a scripted-auth step cannot return restricted data as a binary body', async () => {
    const { engine } = setup([
      {
        stepId: 'login',
        type: 'scripted-auth',
        resultsProcessor: s("context.setStream(context.getRestrictedDataFromHost('idp'))"),
      },
    ]);
    const r = await (await engine).runStep('login', input());
    expect(asText(r.body)).not.toContain(SECRET);
  });

  it('S122: nor put it into a response header name', async () => {
    const { engine } = setup([
      {
        stepId: 'login',
        type: 'scripted-auth',
        resultsProcessor: s(
          "const d = JSON.parse(context.getRestrictedDataFromHost('idp')); context.setHeader('x-' + d.clientSecret, '1')",
        ),
      },
    ]);
    const r = await (await engine).runStep('login', input());
    expect(JSON.stringify(r.headers)).not.toContain(SECRET);
  });

  it('refuses a main call that carries restricted data of another host as bytes', async () => {
    const { engine, calls } = setup([
      {
        stepId: 'login',
        type: 'scripted-auth',
        urlGenerator: s("context.setUrl('other', '/x')"),
        payloadGenerator: s("context.setStream(context.getRestrictedDataFromHost('idp'))"),
      },
    ]);
    const r = await (await engine).runStep('login', input());
    expect(r.errored).toBe(true);
    expect(r.errors.join()).toContain('ENGINE_NOT_PERMITTED');
    expect(calls).toEqual([]);
  });

  it('refuses a main call that carries restricted data in a header name or URL-encoded in the path', async () => {
    for (const script of [
      "const d = JSON.parse(context.getRestrictedDataFromHost('idp')); context.setHeader(d.clientSecret, 'x')",
      "const d = JSON.parse(context.getRestrictedDataFromHost('idp')); context.setHeader('X-A', encodeURIComponent(d.clientSecret + ' '))",
    ]) {
      const { engine, calls } = setup([
        { stepId: 'api', urlGenerator: s("context.setUrl('api', '/x')"), authenticationProcessor: s(script) },
      ]);
      const r = await (await engine).runStep('api', input());
      expect(r.errors.join()).toContain('ENGINE_NOT_PERMITTED');
      expect(calls).toEqual([]);
    }
  });

  it('refuses callAuthenticationHost carrying restricted data to another host', async () => {
    const { engine, calls } = setup([
      {
        stepId: 'login',
        type: 'scripted-auth',
        resultsProcessor: s(`
          const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
          try { context.callAuthenticationHost('other-auth', '/p', { body: d.clientSecret }); context.setBody('sent'); }
          catch (e) { context.setBody(e.code); }`),
      },
    ]);
    const r = await (await engine).runStep('login', input());
    expect(r.body).toBe('ENGINE_NOT_PERMITTED');
    expect(calls).toEqual([]);
  });

  it('still lets callAuthenticationHost send restricted data to its own host', async () => {
    const { engine, calls } = setup([
      {
        stepId: 'login',
        type: 'scripted-auth',
        resultsProcessor: s(`
          const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
          context.callAuthenticationHost('idp', '/token', { body: d.clientSecret });`),
      },
    ]);
    const r = await (await engine).runStep('login', input());
    expect(r.errored).toBe(false);
    expect(calls.map((c) => c.hostId)).toEqual(['idp']);
  });
});
