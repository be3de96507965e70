import { Agent, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { closeGracefully } from '@org/http-drain';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createHttpServer } from '../src/server.js';
import { makeResourceDir, sampleWorkflow } from './helpers.js';

// The packager's wiring of the drain on SIGTERM: createHttpServer tracks its listener, so closeGracefully (as
// main.ts calls it) drains the real app. What the drain itself guarantees (pipelined requests, requests in the
// kernel's buffer, answers being flushed, quiet connections, the timeout) is tested in
// packages/http-drain/test/listen-drain.test.ts (ADR 0129).

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    if (s.listening) await new Promise((r) => s.close(r));
  }
});

/** The packager's own server (createHttpServer), as main.ts runs it. */
async function startPackager(): Promise<{ server: Server; port: number }> {
  const log = createLogger(() => undefined);
  const app = createApp({ limits: DEFAULT_LIMITS, resourceDirs: [makeResourceDir()], log });
  const server = createHttpServer(app, DEFAULT_LIMITS, DEFAULT_TIMEOUTS, log);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Everything a raw socket receives until the server closes it. */
function readAll(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
}

const requestSeen = (server: Server, path: string) =>
  new Promise<void>((resolve) =>
    server.on('request', (req: { url?: string }) => req.url === path && resolve()),
  );

const BODY = JSON.stringify(sampleWorkflow());

describe('closeGracefully', () => {
  it('a reply in flight when the drain begins says Connection: close (no reuse of a closing connection)', async () => {
    const { server, port } = await startPackager();
    const socket = connect(port, '127.0.0.1');
    const received = readAll(socket);
    const seen = requestSeen(server, '/workflow-hash');
    socket.write(
      `POST /workflow-hash HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n`,
    );
    await seen;
    const events: string[] = [];
    const closed = closeGracefully(server, 600_000).then((drained) => {
      events.push('closed');
      return drained;
    });
    events.push('body sent');
    socket.write(BODY);
    const text = await received;
    const head = text.split('\r\n\r\n')[0]!.toLowerCase();
    expect(head).toMatch(/^http\/1\.1 200 /);
    expect(head).toContain('connection: close');
    expect(head).not.toContain('keep-alive');
    expect(await closed).toBe(true);
    expect(events).toEqual(['body sent', 'closed']);
  });

  it('a keep-alive client gets Connection: close on its reply during the drain, and its socket is closed after it', async () => {
    const { server, port } = await startPackager();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let release = () => undefined as void;
    /** A POST on the keep-alive agent; with `hold`, its body waits for `release()`. */
    const post = (hold: boolean) =>
      new Promise<{ headers: IncomingHttpHeaders; status: number }>((resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port,
          path: '/workflow-hash',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) },
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve({ headers: res.headers, status: res.statusCode! }));
        });
        req.on('error', reject);
        if (!hold) return void req.end(BODY);
        req.flushHeaders();
        release = () => void req.end(BODY);
      });
    const first = await post(false);
    expect(first.headers.connection).toBe('keep-alive');
    const seen = requestSeen(server, '/workflow-hash');
    const second = post(true);
    await seen;
    const closed = closeGracefully(server, 600_000);
    release();
    const r = await second;
    expect(r.status).toBe(200);
    expect(r.headers.connection).toBe('close');
    expect(await closed).toBe(true);
    expect(Object.values(agent.freeSockets).flat()).toHaveLength(0);
  });
});
