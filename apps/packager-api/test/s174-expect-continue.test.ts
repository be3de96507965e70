import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newCallerToken, parseTokenHashes } from '@org/packager';
import { answerHeaders, RawClient, wholeAnswer } from '@org/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createHttpServer } from '../src/server.js';
import { form, makeResourceDir, packageKeys, packageRequest, sampleWorkflow } from './helpers.js';

// S174 with `Expect: 100-continue` (ADR 0140): the caller's token is judged from the headers before the body is
// invited. A request without a token its operation accepts gets its 401/403 and never `100 Continue`; a good token
// gets `100 Continue` as before.

const packer = newCallerToken(['package'], 'packer');
const keys = newCallerToken(['key-gen'], 'keys');
const tokens = parseTokenHashes(`${packer.record};${keys.record}`);

/** The headers of the answer itself: not the connection's (Connection, Keep-Alive) nor the clock's (Date). */
describe('S174 caller tokens with Expect: 100-continue (Express service)', () => {
  let server: Server;
  let port = 0;
  let upload: { type: string; bytes: Buffer };
  beforeAll(async () => {
    const log = createLogger(() => undefined, undefined, 'error');
    const app = createApp({ limits: DEFAULT_LIMITS, resourceDirs: [makeResourceDir()], log, tokens });
    server = createHttpServer(app, DEFAULT_LIMITS, DEFAULT_TIMEOUTS, log, undefined, tokens);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const body = new Response(form(packageRequest(packageKeys()), JSON.stringify(sampleWorkflow())));
    upload = {
      type: body.headers.get('content-type') ?? '',
      bytes: Buffer.from(await body.arrayBuffer()),
    };
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const head = (id: string, authorization: string | undefined, length = upload.bytes.length) =>
    'POST /workflow-package HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `Content-Type: ${upload.type}\r\nContent-Length: ${length}\r\nX-Request-Id: ${id}\r\n` +
    (authorization === undefined ? '' : `Authorization: ${authorization}\r\n`) +
    'Expect: 100-continue\r\n\r\n';

  it.each([
    ['no token', 's174-c-none', undefined, 401, 'REQUEST_UNAUTHENTICATED'],
    ['another scheme', 's174-c-basic', 'Basic cGFja2VyOng=', 401, 'REQUEST_UNAUTHENTICATED'],
    [
      'a wrong token',
      's174-c-wrong',
      `Bearer ${newCallerToken(['package'], 'x').token}`,
      401,
      'REQUEST_UNAUTHENTICATED',
    ],
    ['a token of another scope', 's174-c-scope', `Bearer ${keys.token}`, 403, 'REQUEST_FORBIDDEN'],
  ] as const)(
    'S174 %s: the final refusal from the headers alone, never 100 Continue, the bytes a request without Expect gets',
    async (_what, id, authorization, status, code) => {
      const c = await RawClient.open(port);
      c.write(head(id, authorization));
      // The server closes the connection after its answer (Connection: close): no body byte was sent or read.
      await c.closed();
      expect(c.received).not.toContain('HTTP/1.1 100');
      const got = await c.final();
      expect(got.status).toBe(status);
      expect((JSON.parse(got.body) as { code: string }).code).toBe(code);
      expect(got.headers['connection']).toBe('close');
      expect(got.headers['www-authenticate']).toMatch(/^Bearer realm="packager"/);
      // The same answer as the same request sent whole, without Expect.
      const plain = await wholeAnswer(`http://127.0.0.1:${port}/workflow-package`, upload.bytes, {
        'content-type': upload.type,
        'x-request-id': id,
        ...(authorization === undefined ? {} : { authorization }),
      });
      expect(plain.status).toBe(status);
      expect(plain.body).toBe(got.body);
      expect(answerHeaders(got.headers)).toEqual(answerHeaders(plain.headers));
    },
    10_000,
  );

  it('S174 a token of the scope gets 100 Continue, and its upload is served', async () => {
    const c = await RawClient.open(port);
    c.write(head('s174-c-ok', `Bearer ${packer.token}`));
    await c.until((t) => t.includes('\r\n\r\n'));
    expect(c.received).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.write(upload.bytes);
    const got = await c.final();
    expect(got.interim).toEqual(['HTTP/1.1 100 Continue']);
    expect(got.status).toBe(200);
    c.destroy();
  }, 10_000);

  it('S174 a token of the scope with an over-limit upload: still refused before 100 Continue (S8)', async () => {
    const c = await RawClient.open(port);
    c.write(head('s174-c-big', `Bearer ${packer.token}`, 2 ** 40));
    await c.closed();
    expect(c.received).not.toContain('HTTP/1.1 100');
    expect((await c.final()).status).toBe(413);
  }, 10_000);

  it('S174 an open path (/health) gets 100 Continue whatever the token', async () => {
    const c = await RawClient.open(port);
    c.write('POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    await c.until((t) => t.includes('\r\n\r\n'));
    expect(c.received.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    c.destroy();
  }, 10_000);
});
