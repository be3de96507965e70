import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, type Timeouts } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { connectionsCheckingIntervalOf, createHttpServer, MAX_CONNECTIONS_CHECK_MS } from '../src/server.js';
import { makeResourceDir } from './helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    if (s.listening) await new Promise((r) => s.close(r));
  }
});

async function start(timeouts: Timeouts = DEFAULT_TIMEOUTS): Promise<{ server: Server; port: number }> {
  const log = createLogger(() => undefined);
  const app = createApp({ limits: DEFAULT_LIMITS, resourceDirs: [makeResourceDir()], log });
  const server = createHttpServer(app, DEFAULT_LIMITS, timeouts, log);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A client that sends a request line, then one header byte every 50 ms, never ending its headers. */
function slowClient(port: number, giveUpMs: number): Promise<{ reply: string; closedAfterMs?: number }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    let started = 0;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (reply += d));
    socket.on('error', () => undefined);
    const drip = setInterval(() => socket.write('a'), 50);
    const giveUp = setTimeout(() => {
      clearInterval(drip);
      socket.destroy();
      resolve({ reply });
    }, giveUpMs);
    socket.once('connect', () => {
      started = performance.now();
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    });
    socket.once('close', () => {
      clearInterval(drip);
      clearTimeout(giveUp);
      resolve({ reply, closedAfterMs: performance.now() - started });
    });
  });
}

describe('createHttpServer timeouts', () => {
  it('checks timeouts every quarter of the smaller one, at most every second', () => {
    expect(connectionsCheckingIntervalOf({ headersMs: 300, requestMs: 1000 })).toBe(75);
    expect(connectionsCheckingIntervalOf({ headersMs: 3000, requestMs: 60_000 })).toBe(750);
    expect(connectionsCheckingIntervalOf(DEFAULT_TIMEOUTS)).toBe(MAX_CONNECTIONS_CHECK_MS);
    expect(connectionsCheckingIntervalOf({ headersMs: 0, requestMs: 0 })).toBe(MAX_CONNECTIONS_CHECK_MS);
  });

  it('cuts a client that dribbles its headers soon after a 300 ms header timeout (408)', async () => {
    const { port } = await start({ headersMs: 300, requestMs: 1000, keepAliveMs: 5000, shutdownMs: 1000 });
    // 1500 ms of slack: loose enough for a loaded 2-core machine, far below Node's default 30 s check.
    const { reply, closedAfterMs } = await slowClient(port, 300 + 1500);
    expect(closedAfterMs).toBeDefined();
    expect(closedAfterMs!).toBeGreaterThanOrEqual(250);
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
  });
});
