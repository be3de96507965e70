import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REDACTED, SECRET_FORMS } from '@org/workflow-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { encrypted, makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

/**
 * Review finding L2: an upstream that echoes the credential an authenticationProcessor sent must not hand it to
 * the ordinary processors of the step (ADR 0068). The API here is careless: it answers with the Authorization
 * header in its body, in a response header, or inside a binary body.
 */
const CLIENT_SECRET = 'cs-echo+7f/3a9c=Q!x';
const keys = makeKeys();

/** Reads the cached token or logs in through `login`, then sets the header (docs/interfaces.md §5.5). */
const authenticate = `
  let cached = context.getAuthenticationPropertiesFromStep('login', 'token');
  if (cached == null) {
    const r = context.sendToStep('login', null);
    if (r.isErrored()) throw new Error('login failed: ' + r.getAllErrors().join('; '));
    cached = context.getAuthenticationPropertiesFromStep('login', 'token');
  }
  context.setHeader('Authorization', 'Bearer ' + JSON.parse(cached).access_token);`;

const callStep = (stepId: string, path: string, resultsProcessor: string) => ({
  stepId,
  trigger: { http: { server: 'api', method: 'GET', path: `/${stepId}` } },
  urlGenerator: { script: `context.setHttpMethod('GET'); context.setUrl('up', '${path}');` },
  authenticationProcessor: { script: authenticate },
  resultsProcessor: { script: resultsProcessor },
});

const workflow = {
  workflows: [
    {
      name: 'echo',
      steps: [
        // Everything an ordinary processor could do with what came back: log it, put it into a metric, answer
        // the trigger with it, and pass it on to another host.
        callStep(
          'echo',
          'v1/echo',
          `
          const body = context.getBody();
          const header = JSON.parse(context.getHeader('x-echo'))[0];
          const names = JSON.stringify(Object.keys(JSON.parse(body)));
          console.log('api answered ' + body + ' with ' + header);
          context.sendMetric('echo', 1, { h: header });
          context.sendToStep('forward', body + ' ' + header);
          context.setHeader('X-Echo', header);
          context.setHeader('X-Names', names);
          context.setBody(body);`,
        ),
        callStep(
          'binary',
          'v1/binary',
          "context.setBody('binary: ' + context.bytes().binaryToHex(context.getStream().readAll()));",
        ),
        {
          stepId: 'forward',
          urlGenerator: { script: "context.setHttpMethod('POST'); context.setUrl('sink', 'v1/in');" },
          // The message is sent only when a generator sets it (engine SPEC.md §4.3).
          payloadGenerator: { script: 'context.setBody(context.getPassedMessageAsString());' },
        },
        {
          stepId: 'login',
          type: 'scripted-auth',
          urlGenerator: { script: "context.setHttpMethod('POST'); context.setUrl('idp', 'token');" },
          payloadGenerator: {
            script: `
              const d = JSON.parse(context.getRestrictedDataFromHost('idp'));
              context.setBody('client_secret=' + encodeURIComponent(d.clientSecret));`,
          },
          resultsProcessor: {
            script: "context.setAuthenticationPropertiesOnStep('login', 60000, 'token', context.getBody());",
          },
        },
      ],
    },
  ],
};

interface Upstream {
  port: number;
  seen: { url: string; authorization: string | undefined; body: string }[];
  close(): Promise<void>;
}

async function upstream(
  answer: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<Upstream> {
  const seen: Upstream['seen'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ url: req.url!, authorization: req.headers.authorization, body });
      answer(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

let a: RunningAgent;
let idp: Upstream;
let api: Upstream;
let sink: Upstream;
const token = `at-${randomBytes(18).toString('base64url')}`;

beforeAll(async () => {
  idp = await upstream((_req, body, res) => {
    const ok = new URLSearchParams(body).get('client_secret') === CLIENT_SECRET;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { access_token: token, token_type: 'Bearer' } : { error: 'invalid_client' }));
  });
  api = await upstream((req, _body, res) => {
    const auth = req.headers.authorization ?? '';
    if (req.url === '/v1/binary') {
      // Not UTF-8 (0xff 0xfe), with the credential inside.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(auth), Buffer.from([0x80])]));
      return;
    }
    const text = JSON.stringify({ seen: auth, [auth]: 'as a key too' });
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-echo': auth,
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  });
  sink = await upstream((_req, _body, res) => res.writeHead(204).end());
  const path = writePackage(tempDir(), keys, { workflow });
  const host = (id: string, port: number, extra: object) => ({
    id,
    host: `http://127.0.0.1:${port}/`,
    ...extra,
  });
  a = await startAgent(
    keys,
    [
      makeRecord(keys, path, {
        allowExternalHostAccess: [
          host('idp', idp.port, {
            authenticationHost: true,
            allowList: [{ method: 'POST', uriPattern: '/token' }],
            data: { clientSecret: encrypted(keys, CLIENT_SECRET) },
          }),
          host('up', api.port, { allowList: [{ method: 'GET', uriPattern: '/v1/.*' }] }),
          host('sink', sink.port, { allowList: [{ method: 'POST', uriPattern: '/v1/in' }] }),
        ],
      }),
    ],
    { allowPrivateNetworkHosts: ['idp', 'up', 'sink'] },
  );
});
afterAll(async () => {
  await a.close();
  await Promise.all([idp.close(), api.close(), sink.close()]);
});

describe('a response that echoes the credential (review L2, ADR 0068)', () => {
  it('reaches the ordinary processors with <REDACTED> in place of the token: body and header values', async () => {
    const res = await fetch(`${a.url()}/echo`);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    // The API did get the real credential: only what comes back is scrubbed.
    expect(api.seen.map((r) => r.authorization)).toEqual([`Bearer ${token}`]);
    expect(JSON.parse(text)).toEqual({ seen: REDACTED, [REDACTED]: 'as a key too' });
    expect(res.headers.get('x-echo')).toBe(REDACTED);
    expect(JSON.parse(res.headers.get('x-names')!)).toEqual(['seen', REDACTED]);
  });

  it('so the token cannot be passed on to another host', () => {
    expect(sink.seen).toHaveLength(1);
    expect(sink.seen[0]!.body).toBe(
      `${JSON.stringify({ seen: REDACTED, [REDACTED]: 'as a key too' })} ${REDACTED}`,
    );
  });

  it('refuses a binary body that holds the token with ENGINE_SECRET_IN_RESPONSE; the results processor does not run', async () => {
    const res = await fetch(`${a.url()}/binary`);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('binary:');
    const lines = a.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const errored = lines.filter((l) => l['msg'] === 'step errored' && l['stepId'] === 'binary');
    expect(errored.map((l) => String(l['errors']))).toEqual([
      expect.stringMatching(/^ENGINE_SECRET_IN_RESPONSE: host "up" answered with a registered secret/),
    ]);
  });

  it('never writes the token or the client secret, in any tracked form, to a log or metric line', () => {
    const out = a.lines.join('');
    for (const secret of [CLIENT_SECRET, token])
      for (const { name, encode } of SECRET_FORMS) expect(out, `${name} form`).not.toContain(encode(secret));
    const lines = a.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['msg']).filter((m) => String(m).startsWith('api answered'))).toEqual([
      `api answered ${JSON.stringify({ seen: REDACTED, [REDACTED]: 'as a key too' })} with ${REDACTED}`,
    ]);
    expect(lines.filter((l) => l['key'] === 'echo').map((l) => l['dimensions'])).toEqual([{ h: '' }]);
  });
});
