import { createServer } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { applyServerTimeouts, DEFAULT_TIMEOUTS } from '../src/index.js';
import { connectionsCheckingIntervalOf, MAX_CONNECTIONS_CHECK_MS } from '../src/internal.js';
import { closeRuntimes, startRuntime, step, wf } from './helpers.js';

afterEach(closeRuntimes);

/**
 * A slow client: sends a request line, then one header byte every 50 ms and never ends its headers. Resolves
 * with what the server sent and how long after the first byte the server closed the socket, or with
 * `closedAfterMs: undefined` when it is still open after `giveUpMs`.
 */
function slowClient(
  port: number,
  giveUpMs: number,
): Promise<{ reply: string; closedAfterMs: number | undefined }> {
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
      resolve({ reply, closedAfterMs: undefined });
    }, giveUpMs);
    socket.once('connect', () => {
      started = performance.now();
      socket.write('GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    });
    socket.once('close', () => {
      clearInterval(drip);
      clearTimeout(giveUp);
      resolve({ reply, closedAfterMs: performance.now() - started });
    });
  });
}

// A bound loose enough for a loaded 2-core machine, far below Node's default 30 s check interval.
const SLACK_MS = 1500;

describe('connectionsCheckingIntervalOf', () => {
  it('is a quarter of the smallest timeout that is on, between 10 ms and 1 s', () => {
    expect(connectionsCheckingIntervalOf({ headersMs: 300, requestMs: 1000 })).toBe(75);
    expect(connectionsCheckingIntervalOf({ headersMs: 3000, requestMs: 600_000 })).toBe(750);
    expect(connectionsCheckingIntervalOf({ headersMs: 20_000, requestMs: 600_000 })).toBe(
      MAX_CONNECTIONS_CHECK_MS,
    );
    expect(connectionsCheckingIntervalOf({ headersMs: 0, requestMs: 0 })).toBe(MAX_CONNECTIONS_CHECK_MS);
    expect(connectionsCheckingIntervalOf({ headersMs: 0, requestMs: 2000 })).toBe(500);
    expect(connectionsCheckingIntervalOf({ headersMs: 1, requestMs: 1 })).toBe(10);
  });

  it('rejects a negative or non-numeric timeout with a RangeError naming it', () => {
    expect(() => connectionsCheckingIntervalOf({ headersMs: -1, requestMs: 0 })).toThrow(/headersMs/);
    expect(() => connectionsCheckingIntervalOf({ headersMs: 0, requestMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('applyServerTimeouts', () => {
  it('sets the timeouts and the checking interval on the server', () => {
    const server = createServer();
    applyServerTimeouts(server, { headersMs: 400, requestMs: 2000, keepAliveMs: 700 });
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([400, 2000, 700]);
    expect((server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval).toBe(
      100,
    );
  });

  it('refuses a header timeout longer than the request timeout, as createServer() does', () => {
    expect(() => applyServerTimeouts(createServer(), { headersMs: 5000, requestMs: 1000 })).toThrow(
      RangeError,
    );
    expect(() => applyServerTimeouts(createServer(), { headersMs: 5000, requestMs: 0 })).not.toThrow();
  });

  it('refuses a server that already listens (the interval would not apply)', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      expect(() => applyServerTimeouts(server, { headersMs: 400, requestMs: 2000 })).toThrow(/before listen/);
    } finally {
      server.close();
    }
  });
});

describe('trigger server timeouts', () => {
  it('cuts a client that dribbles its headers soon after the 300 ms header timeout (408)', async () => {
    const t = await startRuntime(
      [
        {
          id: 'd1',
          workflow: wf(step('hello', "context.setBody('hi');", { http: { server: 'web', path: '/hello' } })),
          record: { allowHttpServerAccess: [{ id: 'web', port: 9 }] },
        },
      ],
      { timeouts: { ...DEFAULT_TIMEOUTS, headersMs: 300, requestMs: 1000 } },
    );
    const { reply, closedAfterMs } = await slowClient(t.port('d1', 'web'), 300 + SLACK_MS);
    expect(closedAfterMs).toBeDefined();
    expect(closedAfterMs!).toBeGreaterThanOrEqual(250);
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
  });
});
