// S174 on the agent with `Expect: 100-continue` (ADR 0140): a packager route with `data.callerTokenHashes` judges the
// caller's token from the headers before it invites the body. No, a wrong or another scope's token gets its 401/403
// and never `100 Continue`; a token of the scope gets `100 Continue` and its upload is served.
import { createHash, randomBytes } from 'node:crypto';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackagerCapability } from '@org/packager';
import { answerHeaders, RawClient, wholeAnswer } from '@org/test-utils';
import type { PackagerCapability } from '@org/workflow-runtime';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

const keys = makeKeys();

function callerToken(scopes: string, name: string): { token: string; record: string } {
  const token = `oappt_${randomBytes(32).toString('base64url')}`;
  return { token, record: `sha256:${createHash('sha256').update(token).digest('hex')} ${scopes} ${name}` };
}
const encrypter = callerToken('encrypt', 'encrypter');
const keyMaker = callerToken('key-gen', 'keys');

const workflow = {
  workflows: [
    {
      name: 'packager',
      steps: [
        {
          stepId: 'string-encrypt',
          data: { packagerOperation: 'string-encrypt' },
          trigger: {
            http: { server: 'api', method: 'POST', path: '/string-encrypt', multiPartUploadByteLimit: 65536 },
          },
          resultsProcessor: { script: 'context.packager();' },
        },
      ],
    },
  ],
};

const resources = tempDir();
const record = () =>
  makeRecord(keys, writePackage(tempDir(), keys, { workflow }), {
    deploymentId: 'pk',
    allowPackagerAccess: true,
    allowFileAccess: [{ id: 'community', directoryOrFile: resources, READ: true, LIST: true }],
    data: { resourceIds: ['community'], callerTokenHashes: [encrypter.record, keyMaker.record] },
  });

/** A string-encrypt upload: its multipart bytes and Content-Type. */
async function uploadOf(): Promise<{ type: string; bytes: Buffer }> {
  const packager = generateKeyPair('authenticated');
  const alice = generateKeyPair('authenticated');
  const fd = new FormData();
  const body = {
    keys: [
      { id: 'packager', purpose: 'authenticated', type: 'secret', keyHex: keyToHex(packager.secretKey) },
      { id: 'alice', purpose: 'authenticated', type: 'public', keyHex: keyToHex(alice.publicKey!) },
    ],
    encryptionKeys: ['alice'],
    packagerIdentityPrivateKey: 'packager',
  };
  fd.append('body', JSON.stringify(body));
  fd.append('stream', new Blob(['plaintext'], { type: 'application/octet-stream' }), 'stream.bin');
  const r = new Response(fd);
  return { type: r.headers.get('content-type') ?? '', bytes: Buffer.from(await r.arrayBuffer()) };
}

/** The headers of the answer itself: not the connection's (Connection, Keep-Alive) nor the clock's (Date). */
// An agent starts and its first run starts a sandbox worker: 1–1.5 s on 2 shared cores. Explicit timeouts.
const START = { timeout: 15_000 };

let upload: { type: string; bytes: Buffer };
const running: RunningAgent[] = [];
beforeAll(async () => {
  upload = await uploadOf();
});
afterEach(async () => {
  for (const a of running.splice(0)) await a.close();
});

async function start(capability?: PackagerCapability): Promise<string> {
  const a = await startAgent(keys, [record()], { packager: capability });
  running.push(a);
  return a.url('api', 'pk');
}

const head = (id: string, authorization: string | undefined, length = upload.bytes.length) =>
  'POST /string-encrypt HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
  `Content-Type: ${upload.type}\r\nContent-Length: ${length}\r\nX-Request-Id: ${id}\r\n` +
  (authorization === undefined ? '' : `Authorization: ${authorization}\r\n`) +
  'Expect: 100-continue\r\n\r\n';

describe('S174 caller tokens with Expect: 100-continue (agent)', () => {
  it(
    'S174 no token, a wrong one, another scope: the final 401/403 from the headers alone, never 100 Continue',
    START,
    async () => {
      const base = await start();
      const cases = [
        ['s174-ac-none', undefined, 401, 'REQUEST_UNAUTHENTICATED'],
        ['s174-ac-wrong', `Bearer ${callerToken('encrypt', 'x').token}`, 401, 'REQUEST_UNAUTHENTICATED'],
        ['s174-ac-scope', `Bearer ${keyMaker.token}`, 403, 'REQUEST_FORBIDDEN'],
      ] as const;
      for (const [id, authorization, status, code] of cases) {
        const c = await RawClient.open(base);
        c.write(head(id, authorization));
        // The agent closes the connection after its answer: no body byte was sent or read.
        await c.closed();
        expect(c.received).not.toContain('HTTP/1.1 100');
        const got = await c.final();
        expect({ status: got.status, code: (JSON.parse(got.body) as { code: string }).code }).toEqual({
          status,
          code,
        });
        expect(got.headers['connection']).toBe('close');
        expect(got.headers['www-authenticate']).toMatch(/^Bearer realm="packager"/);
        // The answer the same request gets sent whole, without Expect.
        const plain = await wholeAnswer(`${base}/string-encrypt`, upload.bytes, {
          'content-type': upload.type,
          'x-request-id': id,
          ...(authorization === undefined ? {} : { authorization }),
        });
        expect(plain.status).toBe(status);
        expect(plain.body).toBe(got.body);
        expect(answerHeaders(got.headers)).toEqual(answerHeaders(plain.headers));
      }
    },
  );

  it('S174 a token of the scope gets 100 Continue and its upload is served', START, async () => {
    const base = await start();
    const c = await RawClient.open(base);
    c.write(head('s174-ac-ok', `Bearer ${encrypter.token}`));
    await c.until((t) => t.includes('\r\n\r\n'));
    expect(c.received).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.write(upload.bytes);
    expect((await c.final()).status).toBe(200);
    c.destroy();
    // Over the step's cap with a good token: still refused before 100 Continue (S8).
    const big = await RawClient.open(base);
    big.write(head('s174-ac-big', `Bearer ${encrypter.token}`, 64 * 1024 * 1024));
    await big.closed();
    expect(big.received).not.toContain('HTTP/1.1 100');
    expect((await big.final()).status).toBe(413);
  });

  it(
    'S174 a capability without authorize: no 100 Continue on a route with tokens, its read judges the token',
    START,
    async () => {
      const real = createPackagerCapability();
      const base = await start({
        operations: real.operations,
        read: (operation, req, dirs, limit) => real.read(operation, req, dirs, limit),
        answer: (err, id) => real.answer(err, id),
        uploadOptions: (operation, limit) => real.uploadOptions(operation, limit),
        checkCallerTokens: (records, source) => real.checkCallerTokens(records, source),
      });
      // The headers and the body at once: an interim 100 would come before the final answer.
      const c = await RawClient.open(base);
      c.write(head('s174-ac-noauth', `Bearer ${encrypter.token}`));
      c.write(upload.bytes);
      const got = await c.final();
      expect(c.received).not.toContain('HTTP/1.1 100');
      expect(got.status).toBe(200);
      c.destroy();
    },
  );
});
