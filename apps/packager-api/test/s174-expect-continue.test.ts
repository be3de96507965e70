import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { newCallerToken, parseTokenHashes } from '@org/packager';
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

/** One raw connection: what the server wrote, and whether it closed. */
interface Conn {
  socket: Socket;
  readonly text: string;
  readonly closed: boolean;
  /** Waits until `done(text)` holds or the server closes the connection. */
  until(done: (text: string) => boolean): Promise<void>;
}

function open(port: number): Promise<Conn> {
  return new Promise((resolve, reject) => {
    let text = '';
    let closed = false;
    let waiters: (() => void)[] = [];
    const wake = () => {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    };
    const socket = connect(port, '127.0.0.1', () =>
      resolve({
        socket,
        get text() {
          return text;
        },
        get closed() {
          return closed;
        },
        async until(done) {
          while (!done(text) && !closed) await new Promise<void>((r) => waiters.push(r));
        },
      }),
    );
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      wake();
    });
    socket.on('close', () => {
      closed = true;
      wake();
    });
    socket.once('error', reject);
  });
}

/** A final response in raw text: status, lower-case headers, body (Latin-1). */
function parse(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const [line = '', ...fields] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const f of fields) {
    const colon = f.indexOf(':');
    headers[f.slice(0, colon).trim().toLowerCase()] = f.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(line)?.[1] ?? 0), headers, body: text.slice(end + 4) };
}

/** The headers of the answer itself: not the connection's (Connection, Keep-Alive) nor the clock's (Date). */
function answerHeaders(h: Record<string, string>): Record<string, string> {
  const { connection: _c, 'keep-alive': _k, date: _d, ...rest } = h;
  return rest;
}

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
      const c = await open(port);
      c.socket.write(head(id, authorization));
      // The server closes the connection after its answer (Connection: close): no body byte was sent or read.
      await c.until(() => false);
      expect(c.text).not.toContain('HTTP/1.1 100');
      const got = parse(c.text);
      expect(got.status).toBe(status);
      expect((JSON.parse(got.body) as { code: string }).code).toBe(code);
      expect(got.headers['connection']).toBe('close');
      expect(got.headers['www-authenticate']).toMatch(/^Bearer realm="packager"/);
      // The same answer as the same request sent whole, without Expect.
      const plain = await fetch(`http://127.0.0.1:${port}/workflow-package`, {
        method: 'POST',
        body: upload.bytes,
        headers: {
          'content-type': upload.type,
          'x-request-id': id,
          ...(authorization === undefined ? {} : { authorization }),
        },
      });
      const plainHeaders: Record<string, string> = {};
      plain.headers.forEach((v, k) => (plainHeaders[k] = v));
      expect(plain.status).toBe(status);
      expect(Buffer.from(await plain.arrayBuffer()).toString('latin1')).toBe(got.body);
      expect(answerHeaders(got.headers)).toEqual(answerHeaders(plainHeaders));
    },
    10_000,
  );

  it('S174 a token of the scope gets 100 Continue, and its upload is served', async () => {
    const c = await open(port);
    c.socket.write(head('s174-c-ok', `Bearer ${packer.token}`));
    await c.until((t) => t.includes('\r\n\r\n'));
    expect(c.text).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.socket.write(upload.bytes);
    await c.until((t) => {
      const rest = t.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
      const r = rest.includes('\r\n\r\n') ? parse(rest) : undefined;
      return r !== undefined && r.body.length >= Number(r.headers['content-length']);
    });
    const got = parse(c.text.slice('HTTP/1.1 100 Continue\r\n\r\n'.length));
    expect(got.status).toBe(200);
    c.socket.destroy();
  }, 10_000);

  it('S174 a token of the scope with an over-limit upload: still refused before 100 Continue (S8)', async () => {
    const c = await open(port);
    c.socket.write(head('s174-c-big', `Bearer ${packer.token}`, 2 ** 40));
    await c.until(() => false);
    expect(c.text).not.toContain('HTTP/1.1 100');
    expect(parse(c.text).status).toBe(413);
  }, 10_000);

  it('S174 an open path (/health) gets 100 Continue whatever the token', async () => {
    const c = await open(port);
    c.socket.write('POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    await c.until((t) => t.includes('\r\n\r\n'));
    expect(c.text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    c.socket.destroy();
  }, 10_000);
});
