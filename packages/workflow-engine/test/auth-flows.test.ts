import { describe, expect, it } from 'vitest';
import { MAX_SEND_DEPTH, REDACTED, createWorkflowEngine, type OutboundRequest } from '../src/index.js';
import { fakeHost, input, textResponse, workflow } from './fake-host.js';

const SECRET = 'client-secret-Zq81xW';
const RESTRICTED = JSON.stringify({ clientId: 'client-1', clientSecret: SECRET });
const s = (script: string) => ({ script });
const T0 = 1_700_000_000_000;

/** Tokens the fake login host hands out: `tok-<n>-9f8e7d6c5b`. */
const token = (n: number) => `tok-${n}-9f8e7d6c5b`;

/**
 * The pattern real apps use (docs/interfaces.md §5.5): the authenticationProcessor of `api` sets AGENT_AUTH_DATA,
 * calls the scripted-auth step `login` when no token is cached, reads the cached token and sets the header.
 * `login` logs in through the authentication host `idp` and caches the token for `ttl` ms.
 */
function loginFlow(ttl = 1000, extra: object[] = []) {
  return workflow([
    {
      stepId: 'api',
      urlGenerator: s("context.setUrl('api', '/data')"),
      authenticationProcessor: s(`
        let t = context.getAuthenticationPropertiesFromStep('login', 'token');
        if (t === null) {
          context.setProperty('AGENT_AUTH_DATA', JSON.stringify({ scope: 'read' }));
          const r = context.sendToStep('login', null);
          if (r.isErrored()) throw new Error('login failed: ' + r.getAllErrors().join('; '));
          t = context.getAuthenticationPropertiesFromStep('login', 'token');
        }
        const tok = JSON.parse(t).access_token;
        console.log('using ' + tok);
        context.sendMetric('auth-' + tok, 1, { token: tok });
        context.setHeader('Authorization', 'Bearer ' + tok);`),
      resultsProcessor: s("context.setBody('api said ' + context.getBody())"),
    },
    {
      stepId: 'login',
      type: 'scripted-auth',
      urlGenerator: s("context.setHttpMethod('POST'); context.setUrl('idp', '/token')"),
      payloadGenerator: s(`
        const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
        const a = JSON.parse(context.getProperty('AGENT_AUTH_DATA'));
        context.setBody(JSON.stringify({ client_id: d.clientId, client_secret: d.clientSecret, scope: a.scope }));`),
      resultsProcessor: s(`
        console.log('login response ' + context.getBody());
        context.setAuthenticationPropertiesOnStep('login', ${ttl}, 'token', context.getBody());`),
    },
    ...extra,
  ]);
}

async function setup(wf: unknown) {
  let now = T0;
  let logins = 0;
  const host = fakeHost({
    restricted: { idp: RESTRICTED },
    clock: () => now,
    respond: (req: OutboundRequest) => {
      if (req.hostId === 'idp') {
        logins++;
        return textResponse(200, JSON.stringify({ access_token: token(logins), token_type: 'Bearer' }));
      }
      return textResponse(200, `auth=${req.headers['Authorization'] ?? 'none'}`);
    },
  });
  const engine = await createWorkflowEngine(wf, { host, data: {} });
  return {
    host,
    engine,
    logins: () => logins,
    advance: (ms: number) => (now += ms),
  };
}

function output(host: ReturnType<typeof fakeHost>, ...results: unknown[]): string {
  return JSON.stringify([host.logs, host.metrics, results]);
}

describe('authentication flows through a scripted-auth step (docs/interfaces.md §5.5, ADR 0054)', () => {
  it('logs in through the authentication host, caches the token and sends it on the main call', async () => {
    const { host, engine } = await setup(loginFlow());
    const result = await engine.runStep('api', input());
    // The API echoes the header it got; what comes back is scrubbed (ADR 0068).
    expect(result).toMatchObject({ errored: false, body: `api said auth=${REDACTED}` });
    const [login, main] = host.calls;
    expect(login).toMatchObject({
      hostId: 'idp',
      path: '/token',
      method: 'POST',
      isAuthenticationProcessor: true,
    });
    expect(JSON.parse(login!.body as string)).toEqual({
      client_id: 'client-1',
      client_secret: SECRET,
      scope: 'read',
    });
    expect(main).toMatchObject({ hostId: 'api', isAuthenticationProcessor: false });
    expect(main!.headers).toEqual({ Authorization: `Bearer ${token(1)}` });
    expect(output(host)).not.toContain(SECRET);
  });

  it('S121: an authenticationProcessor may sendToStep into a scripted-auth step, not into a plain one', async () => {
    const { host, engine } = await setup(
      workflow([
        {
          stepId: 'into-auth',
          authenticationProcessor: s(
            "if (context.sendToStep('auth', null).isErrored()) throw new Error('x')",
          ),
        },
        { stepId: 'into-plain', authenticationProcessor: s("context.sendToStep('plain', null)") },
        { stepId: 'into-unknown', authenticationProcessor: s("context.sendToStep('nope', null)") },
        { stepId: 'auth', type: 'scripted-auth', resultsProcessor: s("context.diagnosticLog('auth ran')") },
        { stepId: 'plain', resultsProcessor: s("context.diagnosticLog('plain ran')") },
      ]),
    );
    expect((await engine.runStep('into-auth', input())).errored).toBe(false);
    for (const stepId of ['into-plain', 'into-unknown']) {
      const r = await engine.runStep(stepId, input());
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatch(/^authenticationProcessor: ENGINE_NOT_PERMITTED: sendToStep /);
    }
    expect(host.logs.map((l) => l.message)).toEqual(['auth ran']);
  });

  it('S123: an ordinary processor may not sendToStep (or sendToStepAndForget) into a scripted-auth step', async () => {
    const { host, engine } = await setup(
      workflow([
        {
          stepId: 'caller',
          resultsProcessor: s(`
            const out = [];
            for (const f of ['sendToStep', 'sendToStepAndForget']) {
              try { context[f]('auth', null); out.push(f + ' ran'); } catch (e) { out.push(e.code); }
            }
            context.setBody(out.join(' '));`),
        },
        { stepId: 'auth', type: 'scripted-auth', resultsProcessor: s("context.diagnosticLog('auth ran')") },
      ]),
    );
    const r = await engine.runStep('caller', input());
    expect(r.body).toBe('ENGINE_NOT_PERMITTED ENGINE_NOT_PERMITTED');
    expect(host.logs).toEqual([]);
  });

  it('sendToStepAndForget follows the same rule from an authentication context', async () => {
    const { host, engine } = await setup(
      workflow([
        {
          stepId: 'caller',
          authenticationProcessor: s(`
            context.setProperty('AGENT_AUTH_DATA', '{"k":"v"}');
            context.sendToStepAndForget('auth', null);
            try { context.sendToStepAndForget('plain', null); } catch (e) { console.log(e.code); }`),
        },
        {
          stepId: 'auth',
          type: 'scripted-auth',
          resultsProcessor: s(
            "context.diagnosticLog('auth ran with ' + context.getProperty('OPSCOTCH_AUTH_DATA'))",
          ),
        },
        { stepId: 'plain', resultsProcessor: s("context.diagnosticLog('plain ran')") },
      ]),
    );
    await engine.runStep('caller', input());
    await expect.poll(() => host.logs.length).toBe(2);
    expect(host.logs.map((l) => l.message).sort()).toEqual([
      'ENGINE_NOT_PERMITTED',
      // The auth data crossed into an authentication context: registered, so redacted in its logs.
      `auth ran with ${REDACTED}`,
    ]);
  });
});

describe('exchange properties into a scripted-auth step', () => {
  /** The callee reports what it saw by caching it; the caller sends it as a header (the only way out). */
  async function seen(callerScript: string, passedBody = 'null'): Promise<Record<string, unknown>> {
    const { host, engine } = await setup(
      workflow([
        {
          stepId: 'caller',
          urlGenerator: s("context.setUrl('api', '/x'); context.setProperty('plain', 'from-generator')"),
          authenticationProcessor: s(`
            ${callerScript}
            context.sendToStep('callee', ${passedBody});
            context.setHeader('X-Seen', context.getAuthenticationPropertiesFromStep('callee', 'seen'));`),
        },
        {
          stepId: 'callee',
          type: 'scripted-auth',
          resultsProcessor: s(`
            const p = (k) => context.getProperty(k);
            context.setAuthenticationPropertiesOnStep('callee', 60000, 'seen', JSON.stringify({
              agent: p('AGENT_AUTH_DATA'), legacy: p('OPSCOTCH_AUTH_DATA'), plain: p('plain'), own: p('own'),
              body: context.getBody() }));`),
        },
      ]),
    );
    const r = await engine.runStep('caller', input());
    expect(r.errored).toBe(false);
    return JSON.parse(host.calls[0]!.headers['X-Seen']!) as Record<string, unknown>;
  }

  it('passes the caller run properties, and AGENT_AUTH_DATA under both names', async () => {
    expect(
      await seen("context.setProperty('AGENT_AUTH_DATA', '{\"a\":1}'); context.setProperty('own', 'o1');"),
    ).toEqual({
      agent: '{"a":1}',
      legacy: '{"a":1}',
      plain: 'from-generator',
      own: 'o1',
      body: null,
    });
  });

  it('honours the legacy name OPSCOTCH_AUTH_DATA (AGENT_AUTH_DATA wins when both are set)', async () => {
    expect(await seen("context.setProperty('OPSCOTCH_AUTH_DATA', 'legacy-text');")).toMatchObject({
      agent: 'legacy-text',
      legacy: 'legacy-text',
    });
    expect(
      await seen(
        "context.setProperty('OPSCOTCH_AUTH_DATA', 'old'); context.setProperty('AGENT_AUTH_DATA', 'new');",
      ),
    ).toMatchObject({ agent: 'new', legacy: 'new' });
  });

  it('merges a JSON body passed over a JSON AGENT_AUTH_DATA (mergeJsonStrings(property, body))', async () => {
    const set = "context.setProperty('AGENT_AUTH_DATA', JSON.stringify({ a: { x: 1, y: 2 }, keep: true }));";
    expect(await seen(set, "JSON.stringify({ a: { y: 3 }, extra: 'e' })")).toMatchObject({
      agent: '{"a":{"x":1,"y":3},"keep":true,"extra":"e"}',
      body: '{"a":{"y":3},"extra":"e"}',
    });
    // A body that is not a JSON object leaves the property as the caller set it.
    expect(await seen(set, "'plain text'")).toMatchObject({ agent: '{"a":{"x":1,"y":2},"keep":true}' });
    // Without the property neither name is set; the body stays the body.
    expect(await seen('', '\'{"b":1}\'')).toMatchObject({ agent: null, legacy: null, body: '{"b":1}' });
  });
});

describe('isolation of authentication contexts', () => {
  it('registers what crosses into a scripted-auth step, but not the properties ordinary processors set', async () => {
    const { host, engine } = await setup(
      workflow([
        {
          stepId: 'plain',
          urlGenerator: s("context.setProperty('route', 'from-generator')"),
          authenticationProcessor: s(
            "context.setProperty('own', 'set-in-auth'); context.sendToStep('auth', 'passed-body', { 'X-P': 'passed-header' })",
          ),
        },
        {
          stepId: 'auth',
          type: 'scripted-auth',
          authenticationProcessor: s("context.setProperty('inner', 'inner-auth')"),
          resultsProcessor: s("context.sendToStep('leaf', null)"),
        },
        { stepId: 'leaf', type: 'scripted-auth', resultsProcessor: s('') },
      ]),
    );
    const props = { 'http.path': '/invoices' };
    expect((await engine.runStep('plain', input(undefined, { properties: props }))).errored).toBe(false);
    expect((await engine.runStep('auth', input(undefined, { properties: props }))).errored).toBe(false);
    expect(host.secrets).toEqual(expect.arrayContaining(['set-in-auth', 'passed-body', 'passed-header']));
    expect(host.secrets).not.toContain('from-generator');
    expect(host.secrets).not.toContain('/invoices');
    // The scripted-auth step's own authenticationProcessor discards its properties; its baseline stays the input.
    expect(host.secrets).not.toContain('inner-auth');
  });

  it('S122: restricted data a scripted-auth step puts into its body, a property and a header reaches no ordinary processor, result or metric', async () => {
    const { host, engine } = await setup(
      workflow([
        {
          stepId: 'api',
          authenticationProcessor: s(`
            const r = context.sendToStep('leaky', null);
            console.log('callee said ' + r.getBody() + ' | ' + r.getProperty('p') + ' | ' + r.getHeader('x-h'));
            context.setBody(r.getBody());
            context.setProperty('leak', r.getProperty('p'));
            context.setProperty('status_code', '299');
            context.sendMetric('m-' + r.getProperty('p'), 1, { ['d-' + r.getBody()]: r.getHeader('x-h') });`),
          resultsProcessor: s(`
            context.sendMetric('seen-' + context.getBody(), 1, { leak: String(context.getProperty('leak')) });
            context.setBody(JSON.stringify({ body: context.getBody(), leak: context.getProperty('leak'),
              h: context.getHeader('x-h'), c: context.counter('n', 0) }));`),
        },
        {
          stepId: 'leaky',
          type: 'scripted-auth',
          resultsProcessor: s(`
            const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
            console.log('leaky has ' + d.clientSecret);
            context.setBody(d.clientSecret);
            context.setProperty('p', 'p:' + d.clientSecret);
            context.setHeader('X-H', d.clientSecret);`),
        },
      ]),
    );
    const result = await engine.runStep('api', input('in'));
    expect(result.errored).toBe(false);
    expect(JSON.parse(result.body as string)).toEqual({ body: 'in', leak: null, h: null, c: 0 });
    expect(result.status).toBeUndefined();
    expect(output(host, result)).not.toContain(SECRET);
    expect(host.logs.map((l) => l.message)).toEqual([
      `leaky has ${REDACTED}`,
      `callee said ${REDACTED} | p:${REDACTED} | ["${REDACTED}"]`,
    ]);
    expect(host.metrics.map((m) => [m.key, m.dimensions])).toEqual([
      ['m-p:', { 'd-': '[""]' }],
      ['seen-in', { leak: 'null' }],
    ]);
  });

  it('keeps counters and deltas of an authentication context apart from the ordinary ones', async () => {
    const { engine } = await setup(
      workflow([
        {
          stepId: 'a',
          authenticationProcessor: s("context.counter('n', 41); context.delta('d', 100)"),
          resultsProcessor: s("context.setBody(context.counter('n', 1) + ' ' + context.delta('d', 7))"),
        },
      ]),
    );
    expect((await engine.runStep('a', input())).body).toBe('1 7');
  });

  it('S124: a token cached for 1 s is reused within 1 s (one login) and fetched again after; never logged or in a metric', async () => {
    const { host, engine, logins, advance } = await setup(loginFlow(1000));
    const bodies: unknown[] = [];
    bodies.push((await engine.runStep('api', input())).body);
    advance(500);
    bodies.push((await engine.runStep('api', input())).body);
    advance(499);
    bodies.push((await engine.runStep('api', input())).body);
    expect(logins()).toBe(1);
    advance(1); // 1000 ms after the token was cached: expired
    bodies.push((await engine.runStep('api', input())).body);
    expect(logins()).toBe(2);
    expect(bodies).toEqual(Array(4).fill(`api said auth=${REDACTED}`));
    expect(host.calls.filter((c) => c.hostId === 'api').map((c) => c.headers['Authorization'])).toEqual([
      `Bearer ${token(1)}`,
      `Bearer ${token(1)}`,
      `Bearer ${token(1)}`,
      `Bearer ${token(2)}`,
    ]);
    expect(host.calls.filter((c) => c.hostId === 'idp')).toHaveLength(2);
    const logged = JSON.stringify([host.logs, host.metrics]);
    for (const t of [token(1), token(2), SECRET]) expect(logged).not.toContain(t);
    expect(host.logs.map((l) => l.message)).toContain(`using ${REDACTED}`);
    expect(host.logs.find((l) => l.message.startsWith('login response'))?.message).toBe(
      `login response ${REDACTED}`,
    );
    expect(host.metrics.map((m) => [m.key, m.dimensions])).toContainEqual(['auth-', { token: '' }]);
  });

  it('S125: a scripted-auth step that calls itself through its caller ends with ENGINE_SEND_DEPTH, no hang', async () => {
    const report = (target: string) =>
      s(`const r = context.sendToStep('${target}', null);
         context.setHeader('X-Errors', r.isErrored() ? r.getAllErrors().join(' / ') : 'none');`);
    const rethrow = (target: string) =>
      s(`const r = context.sendToStep('${target}', null);
         if (r.isErrored()) throw new Error(r.getAllErrors()[0]);`);
    const { host, engine } = await setup(
      workflow([
        // login → refresh → login → …: each calls the step that called it.
        {
          stepId: 'api',
          urlGenerator: s("context.setUrl('api', '/x')"),
          authenticationProcessor: report('login'),
        },
        { stepId: 'login', type: 'scripted-auth', resultsProcessor: rethrow('refresh') },
        { stepId: 'refresh', type: 'scripted-auth', resultsProcessor: rethrow('login') },
        // A scripted-auth step that tries to call back into its caller, an ordinary step.
        {
          stepId: 'back',
          urlGenerator: s("context.setUrl('api', '/y')"),
          authenticationProcessor: report('back-auth'),
        },
        { stepId: 'back-auth', type: 'scripted-auth', resultsProcessor: rethrow('back') },
      ]),
    );
    expect((await engine.runStep('api', input())).errored).toBe(false);
    expect(host.calls[0]!.headers['X-Errors']).toMatch(
      new RegExp(`ENGINE_SEND_DEPTH: sendToStep: more than ${MAX_SEND_DEPTH} nested step calls`),
    );
    expect((await engine.runStep('back', input())).errored).toBe(false);
    expect(host.calls[1]!.headers['X-Errors']).toMatch(
      /ENGINE_NOT_PERMITTED: sendToStep from an authentication context/,
    );
    // MAX_SEND_DEPTH nested realm runs: about 1 s on a quiet machine, several under load.
  }, 15_000);
});
