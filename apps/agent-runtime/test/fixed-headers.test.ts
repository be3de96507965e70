import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REDACTED } from '@org/workflow-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenAll } from '@org/workflow-runtime';
import { encrypted, makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, startUpstream, type RunningAgent, type Upstream } from './agent-helpers.js';

const FIXED = 'Basic Zml4ZWQtaGVhZGVyLXNlY3JldA==';
const keys = makeKeys();
const ENC = encrypted(keys, 'never-decrypted-here');
const workflow = {
  workflows: [
    {
      name: 'fixed',
      steps: [
        {
          stepId: 'call',
          trigger: { http: { server: 'api', method: 'GET', path: '/call' } },
          urlGenerator: { script: "context.setHttpMethod('GET'); context.setUrl('up', 'v1/x');" },
          resultsProcessor: {
            script: `context.diagnosticLog('leak ${FIXED} / ' + '${Buffer.from(FIXED).toString('base64')}'); context.setBody('ok');`,
          },
        },
      ],
    },
  ],
};

let a: RunningAgent;
let up: Upstream;

beforeAll(async () => {
  up = await startUpstream();
  const path = writePackage(tempDir(), keys, { workflow });
  // Legacy `hosts` map (docs/interfaces.md §3.6), normalised by validateBootstrap.
  const hosts = {
    up: {
      host: `http://127.0.0.1:${up.port}/`,
      headers: { Authorization: FIXED, 'X-Enc': ENC },
      allowlist: [['GET', '/v1/.*']],
    },
  };
  a = await startAgent(keys, [makeRecord(keys, path, { hosts })], { allowPrivateNetworkHosts: ['up'] });
});
afterAll(async () => {
  await a.close();
  await up.close();
});

describe('fixed host headers', () => {
  it('sends fixed headers, keeps a -2/ header literal and never decrypts it (S48, S49)', async () => {
    expect(await (await fetch(`${a.url()}/call`)).text()).toBe('ok');
    const sent = up.requests.at(-1)!;
    expect(sent.headers['authorization']).toBe(FIXED);
    expect(sent.headers['x-enc']).toBe(ENC);
    expect(a.agent.decryptor.calls).toBe(0);
  });

  it('redacts a fixed header value and its Base64 form in logs (S50)', () => {
    const out = a.lines.join('');
    expect(out).toContain(`leak ${REDACTED} / ${REDACTED}`);
    expect(out).not.toContain(FIXED);
    expect(out).not.toContain(ENC);
  });
});

describe('listenAll', () => {
  it('refuses a port in use with AGENT_LISTEN_FAILED naming deployment and server', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as AddressInfo).port;
    const spec = a.agent.servers[0]!;
    const other = { ...a.agent, servers: [{ ...spec, port, server: createServer() }] };
    await expect(listenAll(other)).rejects.toMatchObject({ code: 'AGENT_LISTEN_FAILED' });
    await expect(listenAll(other)).rejects.toThrow(/deployment "dep-1", server "api".*EADDRINUSE/);
    blocker.close();
  });
});
