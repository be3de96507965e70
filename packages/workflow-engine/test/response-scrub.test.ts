import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED, createWorkflowEngine } from '../src/index.js';
import { input, workflow } from './fake-host.js';
import { loopbackHost, startLoopback, type LoopbackServer } from './http-host.js';

// Review finding L2 (ADR 0068): what an upstream echoes of a credential must not reach ordinary processors.
const API_KEY = `k3y-${randomBytes(12).toString('hex')}`;
const TOKEN = `at-${randomBytes(12).toString('hex')}`;
const REFRESH = `rt-${randomBytes(12).toString('hex')}`;
const BINARY = Uint8Array.from([0xff, 0x00, 0x80, 0xfe, ...Buffer.from('hello')]);
const s = (script: string) => ({ script });
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

let api: LoopbackServer;

beforeAll(async () => {
  api = await startLoopback((req, res) => {
    const key = String(req.headers['x-api-key'] ?? req.headers['authorization'] ?? '');
    if (req.url === '/echo') {
      const text = JSON.stringify({ key });
      const name = `x-${key.replace(/^Bearer /, '')}`;
      res.writeHead(200, { 'x-echo-key': key, [name]: 'seen', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } else if (req.url === '/known') {
      // An upstream that knows a credential it was not sent (e.g. from an earlier call).
      res.end(`refresh=${REFRESH}`);
    } else if (req.url === '/binary') {
      res.end(BINARY);
    } else if (req.url === '/binary-echo') {
      res.end(Buffer.concat([BINARY, Buffer.from(key)]));
    } else res.writeHead(404).end();
  });
});
afterAll(() => api.close());

async function run(
  steps: unknown[],
  stepId = steps.length === 1 ? (steps[0] as { stepId: string }).stepId : '',
) {
  const host = loopbackHost({ api: api.url }, { restricted: { api: JSON.stringify({ apiKey: API_KEY }) } });
  const engine = await createWorkflowEngine(workflow(steps), { host, data: {} });
  return { host, result: await engine.runStep(stepId, input()) };
}

/** An ordinary step whose authenticationProcessor sends restricted data of `api` to `api` (allowed, S.A.2). */
const apiKeyStep = (path: string, resultsProcessor: string) => ({
  stepId: 'call',
  urlGenerator: s(`context.setHttpMethod('GET'); context.setUrl('api', '${path}')`),
  authenticationProcessor: s(
    "context.setHeader('X-Api-Key', JSON.parse(context.getRestrictedDataFromHost('api')).apiKey)",
  ),
  resultsProcessor: s(resultsProcessor),
});

describe('scrubResponse: the response of a main call as ordinary processors see it', () => {
  it('L2: replaces restricted data the upstream echoes in the body, the stream, header values and names', async () => {
    const { result } = await run([
      apiKeyStep(
        '/echo',
        `context.setBody(JSON.stringify({
          body: context.getBody(),
          stream: context.bytes().toString(context.getStream().readAll()),
          value: context.getHeader('x-echo-key'),
          byName: context.getHeader('x-${API_KEY}'),
          redactedName: context.getHeader('x-${REDACTED}'),
          length: context.getHeader('content-length'),
        }))`,
      ),
    ]);
    expect(api.seen.at(-1)!.headers['x-api-key']).toBe(API_KEY); // sent as is: only the answer is scrubbed
    const body = JSON.stringify({ key: REDACTED });
    expect(result.errored).toBe(false);
    expect(JSON.parse(result.body as string)).toEqual({
      body,
      stream: body,
      value: JSON.stringify([REDACTED]),
      byName: null,
      redactedName: JSON.stringify(['seen']),
      length: JSON.stringify([String(Buffer.byteLength(body))]),
    });
  });

  it('L2: replaces cached authentication properties in each item of a split step and in the aggregate', async () => {
    const auth = `
      let t = context.getAuthenticationPropertiesFromStep('fan', 'tok');
      if (t === null) {
        context.setAuthenticationPropertiesOnStep('fan', 60000, 'tok',
          JSON.stringify({ access_token: '${TOKEN}', refresh_token: '${REFRESH}' }));
        t = context.getAuthenticationPropertiesFromStep('fan', 'tok');
      }
      context.setHeader('Authorization', 'Bearer ' + JSON.parse(t).access_token);`;
    const { result } = await run([
      {
        stepId: 'fan',
        type: 'scripted-split-aggregate',
        splitGenerator: s("context.addSplitReturnItem('/echo'); context.addSplitReturnItem('/known')"),
        urlGenerator: s(
          "context.setHttpMethod('GET'); context.setUrl('api', context.getBody()); context.setBody(null)",
        ),
        authenticationProcessor: s(auth),
        itemResultProcessor: s("context.setBody(context.getBody() + ' ' + context.getHeader('x-echo-key'))"),
      },
    ]);
    expect(result.errors).toEqual([]);
    expect(JSON.parse(result.body as string)).toEqual([
      `${JSON.stringify({ key: REDACTED })} ${JSON.stringify([REDACTED])}`,
      `refresh=${REDACTED} null`,
    ]);
  });

  it('passes a binary body without a secret byte for byte', async () => {
    const { result } = await run([
      apiKeyStep('/binary', 'context.setBody(context.bytes().binaryToHex(context.getStream().readAll()))'),
    ]);
    expect(result.body).toBe(hex(BINARY).toUpperCase()); // binaryToHex is upper case (SPEC.md §7.1)
  });

  it('L2: refuses a body that is not UTF-8 and holds a secret with ENGINE_SECRET_IN_RESPONSE; no processor sees it', async () => {
    const { result } = await run([apiKeyStep('/binary-echo', "context.setBody('ran')")]);
    expect(result.errored).toBe(true);
    expect(result.body).toBeUndefined();
    expect(result.errors).toEqual([
      'ENGINE_SECRET_IN_RESPONSE: host "api" answered with a registered secret in a body that is not UTF-8 text; the response is refused',
    ]);
  });

  it('leaves the login response of a scripted-auth step to its own processors', async () => {
    const { result, host } = await run([
      {
        stepId: 'login',
        type: 'scripted-auth',
        urlGenerator: s("context.setHttpMethod('GET'); context.setUrl('api', '/echo')"),
        payloadGenerator: s(
          "context.setHeader('X-Api-Key', JSON.parse(context.getRestrictedDataFromHost('api')).apiKey)",
        ),
        resultsProcessor: s(
          "context.setAuthenticationPropertiesOnStep('login', 1000, 'r', context.getBody()); context.setBody(String(context.getBody().includes(JSON.parse(context.getRestrictedDataFromHost('api')).apiKey)))",
        ),
      },
    ]);
    expect(result.body).toBe('true');
    expect(host.secrets).toContain(JSON.stringify({ key: API_KEY }));
  });
});
