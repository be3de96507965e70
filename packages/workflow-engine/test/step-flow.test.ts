import { describe, expect, it } from 'vitest';
import { createWorkflowEngine } from '../src/index.js';
import type { OutboundRequest, OutboundResponse } from '../src/index.js';
import { codedError, fakeHost, input, textResponse, workflow } from './fake-host.js';

const s = (script: string) => ({ script });

async function runFlow(
  step: Record<string, unknown>,
  respond?: (req: OutboundRequest) => OutboundResponse | Promise<OutboundResponse>,
  body = 'in',
) {
  const host = fakeHost({ respond });
  const engine = await createWorkflowEngine(workflow([{ stepId: 'f', ...step }]), { host, data: {} });
  const result = await engine.runStep('f', input(body));
  return { host, result };
}

describe('step flow (docs/interfaces.md §4.5, §6.3)', () => {
  it('runs urlGenerator, payloadGenerator, the call, then resultsProcessor with the response', async () => {
    const { host, result } = await runFlow(
      {
        httpTimeout: 1500,
        urlGenerator: s("context.setUrl('ledger', '/v1/items?x=1')"),
        payloadGenerator: s(
          "context.setBody(JSON.stringify({ p: context.getPassedMessageAsString() })); context.setHeader('Content-Type', 'application/json')",
        ),
        resultsProcessor: s(
          "context.setBody(context.getProperty('status_code') + ' ' + context.getBody() + ' ' + context.getHeader('x-r') + ' ' + context.getStream().readAll().length)",
        ),
      },
      () => textResponse(201, 'done', { 'X-R': ['1'] }),
    );
    expect(host.calls).toEqual([
      {
        hostId: 'ledger',
        path: '/v1/items?x=1',
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"p":"in"}',
        isAuthenticationProcessor: false,
        timeoutMs: 1500,
      },
    ]);
    expect(result).toMatchObject({ status: 201, body: '201 done ["1"] 4', headers: {}, errored: false });
  });

  it('defaults to GET without a body; setHttpMethod wins', async () => {
    const get = await runFlow({ urlGenerator: s("context.setUrl('h', '/a'); context.setBody(null)") });
    expect(get.host.calls[0]?.method).toBe('GET');
    const put = await runFlow({ urlGenerator: s("context.setUrl('h', '/a'); context.setHttpMethod('put')") });
    expect(put.host.calls[0]?.method).toBe('PUT');
  });

  it('uses httpStatusHandling for a matching status instead of resultsProcessor', async () => {
    const { result } = await runFlow(
      {
        urlGenerator: s("context.setUrl('h', '/a')"),
        httpStatusHandling: { '429': s("context.setProperty('status_code', 503); context.setBody('busy')") },
        resultsProcessor: s("context.setBody('results')"),
      },
      () => textResponse(429, 'slow down'),
    );
    expect(result).toMatchObject({ status: 503, body: 'busy' });
  });

  it('runs resultsProcessor for a status without a handler', async () => {
    const { result } = await runFlow(
      {
        urlGenerator: s("context.setUrl('h', '/a')"),
        resultsProcessor: s("context.setBody('saw ' + context.getProperty('status_code'))"),
      },
      () => textResponse(500, 'x'),
    );
    expect(result).toMatchObject({ status: 500, body: 'saw 500', errored: false });
  });

  it('runs httpConnectFailedProcessor when the connection fails', async () => {
    const { result } = await runFlow(
      {
        urlGenerator: s("context.setUrl('h', '/a')"),
        httpConnectFailedProcessor: s(
          "context.setProperty('status_code', 502); context.setBody('down: ' + context.getProperty('http.error'))",
        ),
        resultsProcessor: s("context.setBody('results')"),
      },
      () => Promise.reject(codedError('POLICY_CONNECT_FAILED', 'connect ECONNREFUSED')),
    );
    expect(result).toMatchObject({ status: 502, body: 'down: POLICY_CONNECT_FAILED', errored: false });
  });

  it('makes a connection failure without a handler a run error', async () => {
    const { result } = await runFlow({ urlGenerator: s("context.setUrl('h', '/a')") }, () =>
      Promise.reject(codedError('POLICY_TIMEOUT', 'timed out')),
    );
    expect(result).toMatchObject({ errored: true, errors: ['POLICY_TIMEOUT: timed out'] });
  });

  it('makes a refused call a run error with the policy code and skips resultsProcessor', async () => {
    const { result } = await runFlow(
      {
        urlGenerator: s("context.setUrl('h', '../admin')"),
        resultsProcessor: s("context.setBody('results')"),
      },
      () => Promise.reject(codedError('POLICY_PATH_ESCAPES_BASE', 'the path leaves the base path')),
    );
    expect(result).toMatchObject({
      errored: true,
      errors: ['POLICY_PATH_ESCAPES_BASE: the path leaves the base path'],
      body: 'in',
    });
  });

  it('never passes an uncoded host failure message on', async () => {
    const { result } = await runFlow({ urlGenerator: s("context.setUrl('h', '/a')") }, () =>
      Promise.reject(new Error('internal detail at 10.0.0.5')),
    );
    expect(result.errors).toEqual(['ENGINE_OUTBOUND_FAILED: the outbound call failed']);
  });

  it('runs resultsProcessor on the input when no URL is set', async () => {
    const { host, result } = await runFlow({
      resultsProcessor: s("context.setBody('got ' + context.getBody())"),
    });
    expect(host.calls).toEqual([]);
    expect(result.body).toBe('got in');
  });

  it('stops the step when a generator throws', async () => {
    const { host, result } = await runFlow({
      urlGenerator: s("context.setUrl('h', '/a'); throw new Error('no')"),
      resultsProcessor: s("context.setBody('results')"),
    });
    expect(host.calls).toEqual([]);
    expect(result).toMatchObject({ errored: true, errors: ['urlGenerator: no'] });
  });

  it('does not turn request headers into response headers', async () => {
    const { result } = await runFlow({
      urlGenerator: s("context.setUrl('h', '/a'); context.setHeader('X-Req', '1')"),
      resultsProcessor: s("context.setHeader('X-Res', '2')"),
    });
    expect(result.headers).toEqual({ 'X-Res': '2' });
  });

  it('sends a binary body set with setStream', async () => {
    const { host } = await runFlow({
      urlGenerator: s("context.setUrl('h', '/a'); context.setStream(new Uint8Array([7, 8]))"),
    });
    expect(host.calls[0]).toMatchObject({ method: 'POST', body: new Uint8Array([7, 8]) });
  });
});

describe('httpStatusHandling status ranges', () => {
  const step = {
    urlGenerator: s("context.setUrl('api', '/x')"),
    httpStatusHandling: {
      '300-599': s("context.setBody('wide')"),
      '404': s("context.setBody('exact')"),
      '400-499': s("context.setBody('narrow')"),
    },
    resultsProcessor: s("context.setBody('results')"),
  };
  it.each([
    [404, 'exact'],
    [418, 'narrow'],
    [503, 'wide'],
    [300, 'wide'],
    [599, 'wide'],
    [200, 'results'],
  ])(
    'status %i runs the %s handler (exact key, else the narrowest range that holds it)',
    async (status, body) => {
      const { result } = await runFlow(step, () => textResponse(status, ''));
      expect(result.body).toBe(body);
    },
  );

  it('refuses a range that ends below its start with ENGINE_INVALID_WORKFLOW', async () => {
    await expect(
      createWorkflowEngine(workflow([{ stepId: 'f', ...step, httpStatusHandling: { '599-300': s('') } }]), {
        host: fakeHost(),
        data: {},
      }),
    ).rejects.toMatchObject({ code: 'ENGINE_INVALID_WORKFLOW' });
  });
});

describe('outbound body: what a generator set, never the inherited input (docs/interfaces.md §4.5)', () => {
  /** A caller that passes `{"id":7}` to `fetch` with sendToStep, and `fetch` made of `generators`. */
  async function viaSendToStep(generators: Record<string, unknown>) {
    const host = fakeHost();
    const engine = await createWorkflowEngine(
      workflow([
        {
          stepId: 'main',
          resultsProcessor: s(
            "const r = context.sendToStep('fetch', '{\"id\":7}'); context.setBody(r.getBody())",
          ),
        },
        { stepId: 'fetch', ...generators },
      ]),
      { host, data: {} },
    );
    const result = await engine.runStep('main', input());
    return { host, result };
  }

  it('sends no body, with GET, from a step reached by sendToStep that has only a urlGenerator', async () => {
    const { host, result } = await viaSendToStep({
      urlGenerator: s("context.setUrl('api', '/items/' + JSON.parse(context.getBody()).id)"),
    });
    expect(result.errored).toBe(false);
    expect(host.calls).toHaveLength(1);
    expect(host.calls[0]).toMatchObject({ path: '/items/7', method: 'GET', body: undefined });
  });

  it('sends the passed message, with POST, when the payloadGenerator sets it as the body', async () => {
    const { host } = await viaSendToStep({
      urlGenerator: s("context.setUrl('api', '/items')"),
      payloadGenerator: s('context.setBody(context.getPassedMessageAsString())'),
    });
    expect(host.calls[0]).toMatchObject({ method: 'POST', body: '{"id":7}' });
  });

  it('forwards the passed message, with POST, from a payloadGenerator that is only a comment (issue 28, as the reference)', async () => {
    const { host } = await viaSendToStep({
      urlGenerator: s("context.setUrl('api', '/items')"),
      payloadGenerator: s('// forward the passed message'),
    });
    expect(host.calls[0]).toMatchObject({ path: '/items', method: 'POST', body: '{"id":7}' });
    // A trigger's request body too, and a method the generators chose stands.
    const put = await runFlow(
      { urlGenerator: s("context.setUrl('h', '/a'); context.setHttpMethod('put')"), payloadGenerator: s('') },
      undefined,
      'request body',
    );
    expect(put.host.calls[0]).toMatchObject({ method: 'PUT', body: 'request body' });
    // An empty passed message is no body: GET.
    const empty = await runFlow(
      { urlGenerator: s("context.setUrl('h', '/a')"), payloadGenerator: s('') },
      undefined,
      '',
    );
    expect(empty.host.calls[0]).toMatchObject({ method: 'GET' });
  });

  it('does not send the input of runStep (a trigger request) unless a generator sets it', async () => {
    const plain = await runFlow({ urlGenerator: s("context.setUrl('h', '/a')") }, undefined, 'request body');
    expect(plain.host.calls[0]).toMatchObject({ method: 'GET', body: undefined });
    const forwarded = await runFlow(
      { urlGenerator: s("context.setUrl('h', '/a'); context.setBody(context.getBody())") },
      undefined,
      'request body',
    );
    expect(forwarded.host.calls[0]).toMatchObject({ method: 'POST', body: 'request body' });
  });

  it('does not send a body the authenticationProcessor set (its body changes are discarded)', async () => {
    const { host } = await runFlow({
      urlGenerator: s("context.setUrl('h', '/a')"),
      authenticationProcessor: s("context.setBody('from auth')"),
    });
    expect(host.calls[0]).toMatchObject({ method: 'GET', body: undefined });
  });

  it('keeps the input body for the resultsProcessor of a step without a URL', async () => {
    const { host, result } = await runFlow(
      { resultsProcessor: s("context.setBody('saw ' + context.getBody())") },
      undefined,
      'request body',
    );
    expect(host.calls).toEqual([]);
    expect(result.body).toBe('saw request body');
  });
});
