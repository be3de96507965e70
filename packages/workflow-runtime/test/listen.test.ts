import {
  Agent,
  createServer,
  get,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { RawClient } from '@org/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeAll,
  closeGracefully,
  isDraining,
  trackConnections,
  type OutboundTransport,
} from '../src/index.js';
import { closeRuntimes, startRuntime, step, wf } from './helpers.js';

// The agent's shutdown path (closeAll and runtime.stop together, as main.ts runs them) against keep-alive clients
// and a step that blocks until the test releases it. Nothing here measures time: the assertions are on what the
// clients get and on the order of events. The drain itself (@org/http-drain, ADR 0129) has its own tests in
// packages/http-drain; these check that trigger servers are drained by it.

afterEach(closeRuntimes);

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function fetchVia(agent: Agent, port: number, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    }).on('error', reject);
  });
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

const get1 = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

const DEPLOYMENT = {
  id: 'd1',
  workflow: wf(
    {
      stepId: 'block',
      trigger: { http: { server: 'web', method: 'GET', path: '/block' } },
      urlGenerator: { script: "context.setUrl('api', '/hold');" },
      resultsProcessor: { script: "context.setBody('released ' + context.getBody());" },
    },
    step('fast', "context.setBody('fast');", { http: { server: 'web', method: 'GET', path: '/fast' } }),
    step('echo', "context.setBody('echo ' + context.getBody());", {
      http: { server: 'web', method: 'POST', path: '/echo' },
    }),
  ),
  record: {
    allowHttpServerAccess: [{ id: 'web', port: 9 }],
    allowExternalHostAccess: [
      { id: 'api', host: 'https://api.example.com', allowList: [{ method: 'GET', uriPattern: '/.*' }] },
    ],
  },
};

describe('closeAll', () => {
  it('drains a busy keep-alive connection: Connection: close, 503 AGENT_SHUTTING_DOWN, never 500, done when the step ends', async () => {
    const entered = deferred();
    const gate = deferred();
    // The step's outbound call blocks until the test releases it.
    const transport: OutboundTransport = async () => {
      entered.resolve();
      await gate.promise;
      return { status: 200, headers: {}, body: new TextEncoder().encode('upstream') };
    };
    const t = await startRuntime([DEPLOYMENT], { transport });
    const port = t.port('d1', 'web');
    const server = t.runtime.servers[0]!.server;
    const events: string[] = [];

    // 1. A keep-alive request whose step is in flight when shutdown begins.
    const blocked = fetchVia(new Agent({ keepAlive: true }), port, '/block');
    // Awaited below; a failed assertion before that must not leave an unhandled rejection.
    blocked.catch(() => undefined);
    await entered.promise;

    // 2. A busy keep-alive client: one connection, requests back to back.
    let stopping = false;
    const warm = deferred();
    let before = 0;
    const after: Reply[] = [];
    const busy = new Agent({ keepAlive: true, maxSockets: 1 });
    const loop = (async () => {
      for (;;) {
        const issuedAfterShutdown = stopping;
        let r: Reply;
        try {
          r = await fetchVia(busy, port, '/fast');
        } catch (err) {
          // The listener is closed: a new connection is refused (or an idle one was closed under it).
          return (err as NodeJS.ErrnoException).code ?? 'error';
        }
        if (issuedAfterShutdown) after.push(r);
        else if (++before === 3) warm.resolve();
        // A flood would go on until the shutdown timeout: stop counting well above what a drain allows.
        if (after.length >= 20) return 'flood';
      }
    })();
    await warm.promise;

    // 3. A request whose headers arrived before shutdown and whose body arrives after the runtime stopped.
    const raw = connect(port, '127.0.0.1');
    const rawReply = readAll(raw);
    const rawSeen = new Promise<void>((resolve) =>
      server.on('request', (req: { url?: string }) => req.url === '/echo' && resolve()),
    );
    raw.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n');
    await rawSeen;

    // The shutdown path of main.ts: both at once.
    stopping = true;
    const closed = closeAll(t.runtime, 600_000).then(() => events.push('servers closed'));
    const stopped = t.runtime.stop(600_000).then((idle) => {
      events.push('runtime stopped');
      return idle;
    });
    raw.write('hi');

    const end = await loop;
    expect(end).not.toBe('flood');
    // At most the request already on the wire and one more on the same connection, each told to close it.
    expect(after.length).toBeLessThanOrEqual(2);
    for (const r of after) {
      expect(r.headers.connection).toBe('close');
      expect([200, 503]).toContain(r.status);
    }
    const text = await rawReply;
    const [head = '', body = ''] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(head.toLowerCase()).toContain('content-type: application/problem+json');
    expect(JSON.parse(body)).toMatchObject({ status: 503, code: 'AGENT_SHUTTING_DOWN' });

    expect(events).toEqual([]);

    events.push('released');
    gate.resolve();
    const r1 = await blocked;
    events.push('block answered');
    expect(r1).toMatchObject({ status: 200, body: 'released upstream' });
    expect(r1.headers.connection).toBe('close');
    expect(await stopped).toBe(true);
    await closed;
    expect(events[0]).toBe('released');
    expect(events).toEqual(expect.arrayContaining(['block answered', 'runtime stopped', 'servers closed']));
    expect(server.listening).toBe(false);

    expect(t.runtime.tracker.refused).toBeGreaterThanOrEqual(1);
    const lines = t.lines();
    expect(lines.filter((l) => l['level'] === 'error')).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain('ENGINE_DISPOSED');
  }, 30_000);

  it('closes an idle keep-alive socket once it has been quiet for 250 ms, and resolves when nothing runs', async () => {
    const t = await startRuntime([DEPLOYMENT], {
      transport: () => Promise.resolve({ status: 200, headers: {}, body: new Uint8Array() }),
    });
    const port = t.port('d1', 'web');
    const idle = new Agent({ keepAlive: true });
    const r = await fetchVia(idle, port, '/fast');
    expect(r.headers.connection).toBe('keep-alive');
    const socketClosed = new Promise<void>((resolve) => {
      const sockets = Object.values(idle.freeSockets).flat();
      expect(sockets).toHaveLength(1);
      sockets[0]!.once('close', () => resolve());
    });
    await Promise.all([closeAll(t.runtime, 600_000), t.runtime.stop(600_000)]);
    await socketClosed;
  }, 30_000);

  it('a client that never finishes its headers does not hold the drain once no response is open', async () => {
    const t = await startRuntime([DEPLOYMENT], {
      transport: () => Promise.resolve({ status: 200, headers: {}, body: new Uint8Array() }),
    });
    const port = t.port('d1', 'web');
    const slow = connect(port, '127.0.0.1');
    const slowClosed = readAll(slow);
    slow.write('GET /fast HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    // One whole request on another connection after it: by its answer the server has read the slow bytes.
    expect((await fetchVia(new Agent(), port, '/fast')).status).toBe(200);
    await Promise.all([closeAll(t.runtime, 600_000), t.runtime.stop(600_000)]);
    expect(await slowClosed).toBe('');
  }, 30_000);

  // startRuntime starts real engines and sandbox workers: on a busy machine that alone can pass 1 s, hence the same
  // 30 s bound as the tests above; the drain itself takes a few milliseconds.
  it('a keep-alive client sending requests across the drain gets every answer, the last with Connection: close, none reset', async () => {
    // The second request's step waits on its outbound call until the third request has reached the server, so the
    // server knows of the third before it answers the second (no race with the test's own timing).
    const gate = deferred();
    const calling = deferred();
    const t = await startRuntime([DEPLOYMENT], {
      transport: async () => {
        calling.resolve();
        await gate.promise;
        return { status: 200, headers: {}, body: new TextEncoder().encode('upstream') };
      },
    });
    const port = t.port('d1', 'web');
    const server = t.runtime.servers[0]!.server;
    // The gate opens when the server has parsed the third request (node emits `request` for a pipelined one while
    // the answer before it is still open), not after a delay: nothing here depends on the machine's speed.
    let requests = 0;
    server.on('request', () => {
      if (++requests === 3) gate.resolve();
    });
    const c = await RawClient.open(port);
    c.write(get1('/fast'));
    expect(await c.response()).toMatchObject({
      status: 200,
      body: 'fast',
      headers: { connection: 'keep-alive' },
    });

    // The next request is in the kernel's buffer, not read yet, when the drain starts (it used to be reset with the
    // idle connection); one more follows on the same connection once the drain has started (it used to be dropped
    // behind a `Connection: close` on the one before it).
    c.write(get1('/block'));
    expect(isDraining(server)).toBe(false);
    const closed = closeAll(t.runtime, 600_000);
    expect(isDraining(server)).toBe(true);
    // The third request is sent once the second is being served (its step is calling out): the drain has marked
    // the second `Connection: close` by then and must move the mark to the third, leaving `keep-alive` on the second.
    await calling.promise;
    c.write(get1('/fast'));

    // RawClient.response() throws if the connection ends before a whole answer: every request is answered.
    const after = [await c.response(), await c.response()];
    expect(after.map((r) => [r.status, r.body, r.headers['connection']])).toEqual([
      [200, 'released upstream', 'keep-alive'],
      [200, 'fast', 'close'],
    ]);
    await c.closed();
    await closed;
    expect(server.listening).toBe(false);
  }, 30_000);

  it('an answer sent the moment a pipelined request behind it reaches the server says keep-alive: that request is answered with Connection: close', async () => {
    // The answer before it goes out inside the `request` event of the next request, before any later turn of the
    // event loop: the drain must have moved its `Connection: close` off it by then, or Node drops the next request.
    const held = deferred<ServerResponse>();
    let hold: ServerResponse | undefined;
    const server = createServer((req, res) => {
      if (req.url !== '/hold') return void res.end('fast');
      hold = res;
      held.resolve(res);
    });
    trackConnections(server);
    server.on('request', (req: IncomingMessage) => {
      if (req.url === '/fast') hold?.end('held');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const c = await RawClient.open((server.address() as AddressInfo).port);
      c.write(get1('/hold'));
      await held.promise;
      const closed = closeGracefully(server, 600_000);
      c.write(get1('/fast'));
      // RawClient.response() throws if the connection ends before a whole answer.
      const answers = [await c.response(), await c.response()];
      expect(answers.map((r) => [r.status, r.body, r.headers['connection']])).toEqual([
        [200, 'held', 'keep-alive'],
        [200, 'fast', 'close'],
      ]);
      await c.closed();
      await closed;
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 10_000);

  it('drains an upload sent with Expect: 100-continue as the drain starts: 100 Continue, then its answer with Connection: close', async () => {
    const t = await startRuntime([DEPLOYMENT], {
      transport: () => Promise.resolve({ status: 200, headers: {}, body: new Uint8Array() }),
    });
    const c = await RawClient.open(t.port('d1', 'web'));
    c.write(
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n',
    );
    const closed = closeAll(t.runtime, 600_000);
    expect(await c.response()).toMatchObject({ status: 100 });
    c.write('hi');
    expect(await c.response()).toMatchObject({
      status: 200,
      body: 'echo hi',
      headers: { connection: 'close' },
    });
    await c.closed();
    await closed;
  }, 30_000);
});
