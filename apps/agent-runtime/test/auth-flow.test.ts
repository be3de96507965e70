import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REDACTED, SECRET_FORMS } from '@org/workflow-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { encrypted, makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

/** The client secret, stored `-2/`-encrypted in the authentication host's data; reserved characters on purpose. */
const CLIENT_SECRET = 'cs+7f/3a9c=Q!x';
const keys = makeKeys();
const TTL_MS = 1000;

/**
 * The workflow as real apps write it (docs/interfaces.md §5.5): the HTTP-triggered step's authenticationProcessor
 * reads cached headers, else sets the legacy exchange property OPSCOTCH_AUTH_DATA and calls the scripted-auth
 * step `login`, which logs in through the authentication host and caches the headers for TTL_MS.
 */
const workflow = {
  workflows: [
    {
      name: 'auth-flow',
      steps: [
        {
          stepId: 'items',
          trigger: { http: { server: 'api', method: 'GET', path: '/items' } },
          data: {
            authStep: 'login',
            passToAuthData: { propertiesStoredOnStep: 'items', propertyName: 'headers' },
          },
          urlGenerator: { script: "context.setHttpMethod('GET'); context.setUrl('api', 'v1/items');" },
          authenticationProcessor: {
            script: `
              const passed = context.getProperty('OPSCOTCH_AUTH_DATA');
              let cached = context.getAuthenticationPropertiesFromStep('items', 'headers');
              if (cached == null) {
                context.setProperty('OPSCOTCH_AUTH_DATA', context.mergeJsonStrings(passed, context.getData('passToAuthData')));
                const r = context.sendToStep(context.getData('authStep'), null);
                if (r.isErrored()) throw new Error('login failed: ' + r.getAllErrors().join('; '));
                cached = context.getAuthenticationPropertiesFromStep('items', 'headers');
              }
              const headers = JSON.parse(cached);
              console.log('authenticating with ' + headers.Authorization);
              Object.keys(headers).forEach((h) => context.setHeader(h, headers[h]));`,
          },
          resultsProcessor: {
            script: `
              context.sendMetric('items-calls', 1, { status: context.getProperty('status_code') });
              context.diagnosticLog('api answered ' + context.getProperty('status_code'));
              context.setBody(context.getBody());`,
          },
        },
        {
          stepId: 'login',
          type: 'scripted-auth',
          urlGenerator: { script: "context.setHttpMethod('POST'); context.setUrl('idp', 'token');" },
          payloadGenerator: {
            script: `
              const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
              context.setHeader('Content-Type', 'application/x-www-form-urlencoded');
              context.setBody('grant_type=client_credentials&client_id=' + encodeURIComponent(d.clientId) +
                '&client_secret=' + encodeURIComponent(d.clientSecret));`,
          },
          resultsProcessor: {
            script: `
              const a = JSON.parse(context.getProperty('AGENT_AUTH_DATA'));
              console.log('login answered ' + context.getProperty('status_code') + ': ' + context.getBody());
              const tok = JSON.parse(context.getBody()).access_token;
              context.sendMetric('login-' + tok, 1, { token: tok });
              context.setAuthenticationPropertiesOnStep(a.propertiesStoredOnStep, ${TTL_MS}, a.propertyName,
                JSON.stringify({ Authorization: 'Bearer ' + tok }));`,
          },
        },
        {
          stepId: 'leak',
          trigger: { http: { server: 'api', method: 'GET', path: '/leak' } },
          authenticationProcessor: {
            script: `
              const r = context.sendToStep('leaky', null);
              context.setBody(r.getBody());
              context.setProperty('p', r.getProperty('p'));
              context.setProperty('status_code', '299');`,
          },
          resultsProcessor: {
            script: `
              context.sendMetric('leak-' + context.getBody(), 1, { p: String(context.getProperty('p')) });
              context.setHeader('X-Seen', String(context.getProperty('p')));
              context.setBody('seen ' + context.getBody() + ' ' + context.getProperty('p'));`,
          },
        },
        {
          stepId: 'leaky',
          type: 'scripted-auth',
          resultsProcessor: {
            script: `
              const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
              console.log('leaky has ' + d.clientSecret);
              context.setBody(d.clientSecret);
              context.setProperty('p', d.clientSecret);
              context.setHeader('X-Secret', d.clientSecret);`,
          },
        },
      ],
    },
  ],
};

interface Mock {
  server: Server;
  port: number;
  seen: { url: string; headers: IncomingHttpHeaders; body: string }[];
}

/** A loopback server; `answer` gives status and JSON body for each recorded request. */
async function mockServer(answer: (body: string) => [number, unknown]): Promise<Mock> {
  const seen: Mock['seen'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ url: req.url!, headers: req.headers, body });
      const [status, json] = answer(body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

const close = (m: Mock) => new Promise<void>((r) => m.server.close(() => r()));

let a: RunningAgent;
let login: Mock;
let api: Mock;
const tokens: string[] = [];
let now = 1_700_000_000_000;

beforeAll(async () => {
  login = await mockServer((body) => {
    const form = new URLSearchParams(body);
    if (form.get('client_id') !== 'client-1' || form.get('client_secret') !== CLIENT_SECRET)
      return [401, { error: 'invalid_client' }];
    tokens.push(`at-${randomBytes(18).toString('base64url')}`);
    return [200, { access_token: tokens.at(-1), token_type: 'Bearer', expires_in: 1 }];
  });
  api = await mockServer(() => [200, { items: [1, 2, 3] }]);
  const path = writePackage(tempDir(), keys, { workflow });
  a = await startAgent(
    keys,
    [
      makeRecord(keys, path, {
        allowExternalHostAccess: [
          {
            id: 'idp',
            host: `http://127.0.0.1:${login.port}/`,
            authenticationHost: true,
            allowList: [{ method: 'POST', uriPattern: '/token' }],
            data: { clientId: 'client-1', clientSecret: encrypted(keys, CLIENT_SECRET) },
          },
          {
            id: 'api',
            host: `http://127.0.0.1:${api.port}/`,
            allowList: [{ method: 'GET', uriPattern: '/v1/items' }],
          },
        ],
      }),
    ],
    { allowPrivateNetworkHosts: ['idp', 'api'], now: () => now },
  );
});
afterAll(async () => {
  await a.close();
  await close(login);
  await close(api);
});

async function getItems(): Promise<string> {
  const res = await fetch(`${a.url()}/items`);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return text;
}

describe('authentication flow in the agent (docs/interfaces.md §5.5, S124)', () => {
  it('fetches a token once through the scripted-auth step, reuses it within its TTL, fetches again after', async () => {
    expect(a.agent.decryptor.calls).toBe(0); // lazy: nothing decrypted before the first login
    const bodies = [await getItems()];
    now += TTL_MS / 2;
    bodies.push(await getItems());
    now += TTL_MS / 2 - 1;
    bodies.push(await getItems());
    expect(login.seen).toHaveLength(1);
    now += 1; // TTL_MS after the first login: the cached token has expired
    bodies.push(await getItems());
    expect(login.seen).toHaveLength(2);

    expect(bodies.map((b) => JSON.parse(b) as unknown)).toEqual(Array(4).fill({ items: [1, 2, 3] }));
    expect(login.seen.map((r) => [r.url, r.headers['content-type']])).toEqual([
      ['/token', 'application/x-www-form-urlencoded'],
      ['/token', 'application/x-www-form-urlencoded'],
    ]);
    expect(api.seen.map((r) => r.headers['authorization'])).toEqual([
      `Bearer ${tokens[0]}`,
      `Bearer ${tokens[0]}`,
      `Bearer ${tokens[0]}`,
      `Bearer ${tokens[1]}`,
    ]);
    // The client secret is decrypted at each getRestrictedDataFromHost call, i.e. at each login.
    expect(a.agent.decryptor.calls).toBe(2);
  });

  it('S122: restricted data a scripted-auth step returns reaches neither the HTTP response nor a metric', async () => {
    const res = await fetch(`${a.url()}/leak`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toBe('seen null null');
    expect(res.headers.get('x-seen')).toBe('null');
    expect(res.headers.get('x-secret')).toBeNull();
    const lines = a.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['msg'])).toContain(`leaky has ${REDACTED}`);
    expect(lines.filter((l) => l['key'] === 'leak-null').map((l) => l['dimensions'])).toEqual([
      { p: 'null' },
    ]);
  });

  it('never writes the token or the client secret, in any tracked form, to a log or metric line', () => {
    const out = a.lines.join('');
    expect(tokens).toHaveLength(2);
    for (const secret of [CLIENT_SECRET, ...tokens])
      for (const { name, encode } of SECRET_FORMS) expect(out, `${name} form`).not.toContain(encode(secret));
    const lines = a.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const messages = lines.map((l) => l['msg']);
    expect(messages.filter((m) => String(m).startsWith('authenticating'))).toEqual(
      Array(4).fill(`authenticating with ${REDACTED}`),
    );
    expect(messages.filter((m) => String(m).startsWith('login answered 200: '))).toEqual([
      `login answered 200: ${REDACTED}`,
      `login answered 200: ${REDACTED}`,
    ]);
    const metrics = lines.filter((l) => l['type'] === 'metric');
    expect(metrics.filter((m) => m['key'] === 'login-').map((m) => m['dimensions'])).toEqual([
      { token: '' },
      { token: '' },
    ]);
    expect(metrics.filter((m) => m['key'] === 'items-calls')).toHaveLength(4);
  });
});
