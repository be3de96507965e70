import {
  createServer,
  Agent,
  request,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeGracefully,
  IDLE_GRACE_MS,
  isDraining,
  trackConnections,
  type ClosableServer,
} from '../src/listen-drain.js';

// The drain on SIGTERM against real servers on port 0 and raw keep-alive clients (issue 27: under load, some
// answers after SIGTERM still said keep-alive and requests on those connections were reset). Nothing here
// measures time: the assertions are on what each client gets and on the order of events. Each consumer tests its
// own wiring (apps/packager-api/test/listen-drain.test.ts, packages/workflow-runtime/test/listen.test.ts).

const servers: ClosableServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    if (s.listening) await new Promise((r) => s.close(r));
  }
});

async function listen(server: ClosableServer): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A net server with the two close methods of an HTTP server, as the agent's `tcp` trigger servers have: its
 * connections are idle unless `busy`.
 */
class FakeTcpServer extends NetServer {
  readonly #sockets = new Set<Socket>();
  readonly #busy: boolean;
  /** Resolves once a connection is accepted. */
  readonly accepted: Promise<void>;
  idleCloses = 0;

  constructor(options: { busy?: boolean } = {}) {
    super();
    this.#busy = options.busy === true;
    this.accepted = new Promise<void>((resolve) =>
      this.on('connection', (socket: Socket) => {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        resolve();
      }),
    );
  }

  closeIdleConnections(): void {
    this.idleCloses++;
    if (!this.#busy) for (const s of this.#sockets) s.destroy();
  }

  closeAllConnections(): void {
    for (const s of this.#sockets) s.destroy();
  }
}

/**
 * A bare server with the drain's tracking: `GET /slow/<n>` answers once `gates[n]` is released, any other path at
 * once; `GET /big` answers `big` bytes; a `POST` answers once its whole body is read.
 */
async function startBare(gates: { promise: Promise<void> }[] = [], big = 0) {
  const server = createServer();
  const listener = trackConnections(server, (req, res) => {
    const slow = /^\/slow\/(\d+)$/.exec(req.url ?? '');
    const body = req.url === '/big' ? Buffer.alloc(big, 0x61) : Buffer.from(`answer ${req.url}`);
    const send = () => {
      res.setHeader('content-length', body.length);
      res.end(body);
    };
    if (req.method === 'POST') return void req.on('end', send).resume();
    if (slow === null) return send();
    void gates[Number(slow[1])]!.promise.then(send);
  });
  server.on('request', listener);
  return { server, port: await listen(server) };
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A raw HTTP/1.1 connection: whole answers (by Content-Length) in order, and how the server ended it. */
class Client {
  readonly answers: Answer[] = [];
  /** 'fin' when the server closed cleanly, 'reset' on ECONNRESET (or another socket error). */
  end: 'open' | 'fin' | 'reset' = 'open';
  #buf = '';
  #waiters: (() => void)[] = [];
  readonly socket: Socket;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => {
      this.#buf += d;
      this.#parse();
    });
    this.socket.on('end', () => {
      if (this.end === 'open') this.end = 'fin';
      this.socket.end();
    });
    this.socket.on('error', () => (this.end = 'reset'));
    this.socket.on('close', () => this.#wake());
  }

  #parse(): void {
    for (;;) {
      const end = this.#buf.indexOf('\r\n\r\n');
      if (end < 0) break;
      const [statusLine = '', ...lines] = this.#buf.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines)
        headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const length = Number(headers['content-length'] ?? '0');
      if (this.#buf.length < end + 4 + length) break;
      this.answers.push({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: this.#buf.slice(end + 4, end + 4 + length),
      });
      this.#buf = this.#buf.slice(end + 4 + length);
    }
    this.#wake();
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Resolves once `n` answers arrived in total (rejects if the connection closes first). */
  async answered(n: number): Promise<Answer[]> {
    while (this.answers.length < n) {
      if (this.socket.closed)
        throw new Error(`closed after ${this.answers.length} of ${n} answers (${this.end})`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return this.answers;
  }

  /** Resolves when the connection is closed, with how. */
  async closed(): Promise<'fin' | 'reset'> {
    while (!this.socket.closed) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.end === 'open' ? 'reset' : this.end;
  }
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
const requestSeen = (server: Server, path: string) =>
  new Promise<void>((resolve) =>
    server.on('request', (req: { url?: string }) => req.url === path && resolve()),
  );

const BODY = 'a body sent after the drain started';
const postHead = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n`;

describe('closeGracefully (issue 27)', () => {
  it('keep-alive clients across the drain: every answer started after it says Connection: close (a pipelined batch: its last), none is reset', async () => {
    const { server, port } = await startBare();
    // A: a keep-alive connection that has had one answer; its next request is sent at once when the drain starts.
    const a = new Client(port);
    a.write(get('/health'));
    expect((await a.answered(1))[0]!.headers['connection']).toBe('keep-alive');
    // B: a request in flight (headers read, body not yet sent).
    const b = new Client(port);
    const seen = requestSeen(server, '/echo');
    b.write(postHead('/echo'));
    await seen;
    // C: a connection that has had one answer and pipelines two requests in one write after the drain starts.
    const c = new Client(port);
    c.write(get('/health'));
    await c.answered(1);

    const closed = closeGracefully(server, 600_000);
    a.write(get('/health'));
    c.write(get('/health') + get('/ready'));
    b.write(BODY);

    expect(await a.closed()).toBe('fin');
    expect(a.answers).toHaveLength(2);
    expect(a.answers[1]).toMatchObject({ status: 200, headers: { connection: 'close' } });
    expect(await b.closed()).toBe('fin');
    expect(b.answers).toEqual([
      expect.objectContaining({ status: 200, headers: expect.objectContaining({ connection: 'close' }) }),
    ]);
    expect(await c.closed()).toBe('fin');
    expect(c.answers.map((r) => r.status)).toEqual([200, 200, 200]);
    // The pipelined pair: both answered; the last says close (after `close`, Node would drop the one behind it).
    expect(c.answers[2]!.headers['connection']).toBe('close');
    expect(await closed).toBe(true);
    expect(server.listening).toBe(false);
  });

  it('a busy keep-alive client sending back to back: at most one more answer, with Connection: close, then ECONNREFUSED', async () => {
    const { server, port } = await startBare();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const fetchVia = () =>
      new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/health', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
        });
        req.on('error', reject);
        req.end();
      });
    let draining = false;
    let before = 0;
    const warm = deferred();
    const after: IncomingHttpHeaders[] = [];
    const loop = (async () => {
      for (;;) {
        const sentAfter = draining;
        try {
          const r = await fetchVia();
          if (sentAfter) after.push(r.headers);
          else if (++before === 3) warm.resolve();
        } catch (err) {
          return (err as NodeJS.ErrnoException).code;
        }
        if (after.length > 5) return 'flood';
      }
    })();
    await warm.promise;
    draining = true;
    const closed = closeGracefully(server, 600_000);
    // The request on the wire when the drain started is answered; the next one needs a new connection.
    expect(await loop).toBe('ECONNREFUSED');
    expect(after.length).toBeLessThanOrEqual(1);
    for (const h of after) expect(h.connection).toBe('close');
    expect(await closed).toBe(true);
  });

  it('answers a request already in the kernel buffer of an idle keep-alive connection instead of resetting it', async () => {
    const { server, port } = await startBare();
    const c = new Client(port);
    c.write(get('/one'));
    expect((await c.answered(1))[0]!.headers['connection']).toBe('keep-alive');
    // The next request reaches the server's socket buffer before the drain starts; node has not read it yet.
    c.write(get('/two'));
    const closed = closeGracefully(server, 600_000);
    expect(await c.closed()).toBe('fin');
    expect(c.answers[1]).toMatchObject({ body: 'answer /two', headers: { connection: 'close' } });
    expect(await closed).toBe(true);
  });

  it('answers every pipelined request read before the drain; the last answer closes the connection', async () => {
    const gates = [deferred(), deferred()];
    const { server, port } = await startBare(gates);
    const c = new Client(port);
    const both = Promise.all([requestSeen(server, '/slow/0'), requestSeen(server, '/slow/1')]);
    c.write(get('/slow/0') + get('/slow/1'));
    await both;
    const closed = closeGracefully(server, 600_000);
    for (const g of gates) g.resolve();
    expect(await c.closed()).toBe('fin');
    expect(c.answers.map((r) => [r.body, r.headers['connection']])).toEqual([
      ['answer /slow/0', 'keep-alive'],
      ['answer /slow/1', 'close'],
    ]);
    expect(await closed).toBe(true);
  });

  it('delivers a pipelined answer already written behind one in flight, then closes the quiet connection', async () => {
    const gates = [deferred()];
    const { server, port } = await startBare(gates);
    const c = new Client(port);
    const both = Promise.all([requestSeen(server, '/slow/0'), requestSeen(server, '/fast')]);
    c.write(get('/slow/0') + get('/fast'));
    await both;
    const closed = closeGracefully(server, 600_000);
    gates[0]!.resolve();
    expect(await c.closed()).toBe('fin');
    expect(c.answers.map((r) => r.body)).toEqual(['answer /slow/0', 'answer /fast']);
    expect(await closed).toBe(true);
  });

  it('lets an answer still being flushed when the drain starts arrive whole', async () => {
    const BIG = 16 * 1024 * 1024; // more than the socket buffers hold while the client does not read
    const { server, port } = await startBare([], BIG);
    const flushing = new Promise<ServerResponse>((resolve) =>
      server.on('request', (_req, res: ServerResponse) => setImmediate(() => resolve(res))),
    );
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    socket.write(get('/big'));
    const res = await flushing;
    expect(res.writableEnded && !res.writableFinished).toBe(true);
    const closed = closeGracefully(server, 600_000);
    let bytes = 0;
    let head = '';
    const ended = new Promise<string>((resolve) => {
      socket.on('data', (d: Buffer) => {
        if (head === '') head = d.subarray(0, d.indexOf('\r\n\r\n') + 4).toString('latin1');
        bytes += d.length;
      });
      socket.on('end', () => resolve('fin'));
      socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    socket.resume();
    expect(await ended).toBe('fin');
    expect(bytes).toBe(Buffer.byteLength(head) + BIG);
    expect(await closed).toBe(true);
  });

  it(`closes an idle keep-alive connection once quiet for IDLE_GRACE_MS (${IDLE_GRACE_MS} ms), and resolves true`, async () => {
    const { server, port } = await startBare();
    const c = new Client(port);
    c.write(get('/one'));
    await c.answered(1);
    const closed = closeGracefully(server, 600_000);
    expect(await c.closed()).toBe('fin');
    expect(await closed).toBe(true);
    expect(c.answers).toHaveLength(1);
  });

  it('a client that stops in the middle of its headers does not hold the drain', async () => {
    const { server, port } = await startBare();
    const slow = new Client(port);
    slow.write('GET /one HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    // A whole request on another connection after it: by its answer the server has read the slow bytes.
    const other = new Client(port);
    other.write(get('/two'));
    await other.answered(1);
    expect(await closeGracefully(server, 600_000)).toBe(true);
    expect(await slow.closed()).not.toBe('open');
    expect(slow.answers).toEqual([]);
  });

  it('cuts what is left after the timeout and resolves false', async () => {
    const gates = [deferred()];
    const { server, port } = await startBare(gates);
    const c = new Client(port);
    const seen = requestSeen(server, '/slow/0');
    c.write(get('/slow/0'));
    await seen;
    expect(await closeGracefully(server, 50)).toBe(false);
    expect(await c.closed()).not.toBe('open');
    gates[0]!.resolve();
  });

  it('stops a server without trackConnections (a tcp trigger server) and runs its closeIdleConnections()', async () => {
    const server = new FakeTcpServer();
    const port = await listen(server);
    const client = connect(port, '127.0.0.1');
    const clientClosed = new Promise<void>((resolve) => client.on('close', () => resolve()));
    client.on('error', () => undefined);
    await server.accepted;
    expect(await closeGracefully(server, 600_000)).toBe(true);
    await clientClosed;
    expect(server.idleCloses).toBe(1);
    expect(server.listening).toBe(false);
  });

  it('cuts the busy connections of a server without trackConnections after the timeout and resolves false', async () => {
    const server = new FakeTcpServer({ busy: true });
    const port = await listen(server);
    const client = connect(port, '127.0.0.1');
    const clientClosed = new Promise<void>((resolve) => client.on('close', () => resolve()));
    client.on('error', () => undefined);
    await server.accepted;
    expect(await closeGracefully(server, 50)).toBe(false);
    await clientClosed;
  });
});

describe('isDraining', () => {
  it('is false until closeGracefully starts on a tracked server, then true', async () => {
    const { server } = await startBare();
    expect(isDraining(server)).toBe(false);
    const closed = closeGracefully(server, 600_000);
    expect(isDraining(server)).toBe(true);
    expect(await closed).toBe(true);
    expect(isDraining(server)).toBe(true);
  });

  it('is false for a server without trackConnections, even while it closes', async () => {
    const server = new FakeTcpServer();
    await listen(server);
    const closed = closeGracefully(server, 600_000);
    expect(isDraining(server)).toBe(false);
    expect(await closed).toBe(true);
  });
});
