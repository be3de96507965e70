import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPackagerCapability, type PackagerAnswer } from '@org/packager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, newKey, packageKeys, packageRequest, sampleWorkflow, spec, useServer } from './helpers.js';

// The Express service and @org/packager's capability (the agent's front-end) answer the same request with the same
// status, body bytes and headers (ADR 0138). The capability side is served here as a host serves it: read, run,
// wipe; a refused read answered with `answer(err, requestId)`.

const LIMITS = { stringBytes: 1000 };
const srv = useServer(LIMITS);
const cap = createPackagerCapability({ limits: LIMITS });
let capUrl = '';
let server: Server;

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const id = String(req.headers['x-request-id']);
  const operation = (req.url ?? '/').slice(1).split('?')[0]!;
  let answer: PackagerAnswer;
  try {
    const held = await cap.read(operation, req, { resourceDirs: [srv.resourceDir], workflowSourceDirs: [] });
    try {
      answer = await held.run(id);
    } finally {
      held.wipe();
    }
  } catch (err) {
    answer = cap.answer(err, id);
  }
  res.writeHead(answer.status, {
    ...answer.headers,
    'content-length': answer.body.byteLength,
    connection: 'close',
  });
  res.end(answer.body);
}

beforeAll(async () => {
  server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  capUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** What both front-ends must agree on: status, body bytes, and the headers of the answer itself. */
async function seen(res: Response) {
  const h = (name: string) => res.headers.get(name);
  return {
    status: res.status,
    body: Buffer.from(await res.arrayBuffer()).toString('latin1'),
    headers: {
      'content-type': h('content-type'),
      'content-length': h('content-length'),
      allow: h('allow'),
      'accept-post': h('accept-post'),
      vary: h('vary'),
      'cache-control': h('cache-control'),
    },
  };
}

type Request = { path: string; init?: RequestInit };

async function both(id: string, make: () => Request) {
  const send = (base: string) => {
    const { path, init = {} } = make();
    return fetch(`${base}${path}`, { ...init, headers: { ...(init.headers as object), 'x-request-id': id } });
  };
  const express = await seen(await send(srv.url));
  const capability = await seen(await send(capUrl));
  return { express, capability };
}

const json = (path: string, body: string, headers: Record<string, string> = {}): Request => ({
  path,
  init: { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } },
});
const multipart = (path: string, fd: () => FormData, headers: Record<string, string> = {}): Request => ({
  path,
  init: { method: 'POST', body: fd(), headers },
});

function encryptBody(recipients: string[]) {
  const packager = newKey('packager', 'authenticated');
  const alice = newKey('alice', 'authenticated');
  return {
    keys: [spec(packager, 'secret'), spec(alice, 'public')],
    encryptionKeys: recipients,
    packagerIdentityPrivateKey: 'packager',
  };
}

describe('the capability answers as the Express service does, for the same request id', () => {
  const k = packageKeys();
  const cases: [string, string, () => Request, number][] = [
    [
      '415 with Accept-Post (JSON to a form endpoint)',
      'parity-415',
      () => json('/workflow-package', '{}'),
      415,
    ],
    [
      '406 (Accept excludes every answer type)',
      'parity-406',
      () => multipart('/string-encrypt', () => form(encryptBody(['alice']), 'x'), { accept: 'image/png' }),
      406,
    ],
    ['405 with Allow', 'parity-405', () => ({ path: '/workflow-package' }), 405],
    [
      '400 key-gen without purpose (compatibility members, no-store)',
      'parity-kg-1',
      () => ({ path: '/key-gen' }),
      400,
    ],
    [
      '400 key-gen with a repeated purpose',
      'parity-kg-2',
      () => ({ path: '/key-gen?purpose=sign&purpose=sign' }),
      400,
    ],
    [
      '400 a body part that is not JSON',
      'parity-body',
      () => multipart('/string-encrypt', () => form('{"keys":', 'x', true)),
      400,
    ],
    [
      '422 a field failing the schema (errors by pointer)',
      'parity-field',
      () => multipart('/workflow-package', () => form({ ...packageRequest(k), extra: 1 }, '{}')),
      422,
    ],
    [
      '422 two recipients for /string-encrypt',
      'parity-one',
      () => multipart('/string-encrypt', () => form(encryptBody(['alice', 'alice']), 'x')),
      422,
    ],
    [
      '422 an unknown key id (refused when the operation runs)',
      'parity-key',
      () => multipart('/string-encrypt', () => form(encryptBody(['nobody']), 'x')),
      422,
    ],
    [
      '413 a stream part over its limit',
      'parity-413',
      () => multipart('/string-encrypt', () => form(encryptBody(['alice']), 'x'.repeat(5000))),
      413,
    ],
    [
      '422 an invalid bootstrap (refused by the operation)',
      'parity-bootstrap',
      () => multipart('/bootstrap-encrypt', () => form(encryptBody(['alice']), '[{"deploymentId":"d1"}]')),
      422,
    ],
    ['400 a workflow that is not JSON', 'parity-wf', () => json('/workflow-compile', '{"workflows":'), 400],
    [
      '422 a missing resource (with a UUID request id)',
      '0b0e2b4c-3f3a-4c49-9a53-3d7b0f6a2b11',
      () =>
        json(
          '/workflow-hash',
          JSON.stringify({
            workflows: [{ name: 'x', steps: [{ stepId: 'a', resultsProcessor: { resource: '/nope.js' } }] }],
          }),
        ),
      422,
    ],
    ['200 health', 'parity-health', () => ({ path: '/health' }), 200],
    ['200 workflow-hash', 'parity-hash', () => json('/workflow-hash', JSON.stringify(sampleWorkflow())), 200],
    [
      '200 workflow-compile as the stream part of a form',
      'parity-compile',
      () =>
        multipart('/workflow-compile', () => {
          const fd = new FormData();
          fd.append('stream', new Blob([JSON.stringify(sampleWorkflow())]), 'wf.json');
          return fd;
        }),
      200,
    ],
  ];

  it.each(cases)('%s', async (_what, id, make, status) => {
    const { express, capability } = await both(id, make);
    expect(express.status).toBe(status);
    expect(capability).toEqual(express);
  });
});
