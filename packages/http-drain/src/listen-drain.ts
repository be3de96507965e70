import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

// The drain on SIGTERM of both HTTP services (ADR 0083, amended by ADR 0129; issue 27). Node's own `server.close()`
// and `closeIdleConnections()` lose requests under load: they destroy a connection whose last answer is still
// being flushed (a large answer is cut) or that already holds the next pipelined request; an idle connection is
// cut while the client's next request sits unread in the kernel's buffer; and an answer that says
// `Connection: close` makes Node drop the pipelined requests already read behind it.

/**
 * How long a connection must have had no open response and read nothing before the drain closes it: a busy
 * keep-alive client that has just received an answer sends its next request within this time, and that request
 * is then answered (with `Connection: close`) instead of being reset.
 */
export const IDLE_GRACE_MS = 250;

/** One accepted connection. */
interface Connection {
  readonly socket: Socket;
  /** Responses not closed yet, oldest first: more than one when the client pipelines. */
  readonly open: ServerResponse[];
  /** When the connection last became quiet (opened, or its last open response closed)… */
  quietSince: number;
  /** …and `socket.bytesRead` then: more bytes since mean a request is arriving. */
  quietBytes: number;
  /** A close check is scheduled. */
  checking: boolean;
}

/** Runs `fn` after Node has read every socket that was readable when it was called (two event-loop turns). */
function afterPendingReads(fn: () => void): void {
  // A poll phase runs between two check phases: bytes already in the kernel are parsed into requests first.
  setImmediate(() => setImmediate(fn));
}

/** The per-server state of {@link trackConnections}, used by {@link closeGracefully}. */
class Connections {
  readonly #connections = new Map<Socket, Connection>();
  /** Responses this drain marked `Connection: close` (so the mark can move to a pipelined successor). */
  readonly #marked = new WeakSet<ServerResponse>();
  #draining = false;

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      const c: Connection = {
        socket,
        open: [],
        quietSince: performance.now(),
        quietBytes: 0,
        checking: false,
      };
      this.#connections.set(socket, c);
      socket.once('close', () => this.#connections.delete(socket));
      if (this.#draining) this.#scheduleCheck(c);
    });
  }

  /** True once {@link drain} ran. */
  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Runs `listener` for a request and tracks its response. During a drain the request is handled after the
   * reads pending when it arrived: requests a client pipelined behind it are read by then, so `Connection: close`
   * goes on the last of them and none is dropped.
   */
  handle(listener: RequestListener, req: IncomingMessage, res: ServerResponse): void {
    const c = this.#connections.get(req.socket);
    if (c !== undefined) {
      c.open.push(res);
      // 'close' comes once per response: `on` needs no once-wrapper to allocate and remove.
      res.on('close', () => this.#responseClosed(c, res));
    }
    if (!this.#draining) return void listener(req, res);
    // The mark leaves the older answers now, not with the new one's below: an older answer sent in between would
    // still say `close`, and Node would drop this request, which has reached the server, behind it.
    if (c !== undefined) this.#unmarkOlder(c);
    afterPendingReads(() => {
      if (c !== undefined) this.#markNewest(c);
      else if (!res.headersSent) res.setHeader('connection', 'close');
      void listener(req, res);
    });
  }

  #responseClosed(c: Connection, res: ServerResponse): void {
    const i = c.open.indexOf(res);
    if (i >= 0) c.open.splice(i, 1);
    if (c.open.length > 0) return;
    c.quietSince = performance.now();
    c.quietBytes = c.socket.bytesRead;
    if (this.#draining) this.#scheduleCheck(c);
  }

  /**
   * `Connection: close` on the newest response of a connection whose headers are not sent: Node ends the
   * connection after it. An older response this drain marked, not started yet, loses the mark (it says
   * `keep-alive` instead): a request pipelined behind it arrived, and Node would drop that request after an answer
   * that says `close`.
   */
  #markNewest(c: Connection): void {
    this.#unmarkOlder(c);
    const newest = c.open.at(-1);
    if (newest === undefined || newest.headersSent) return;
    newest.setHeader('connection', 'close');
    this.#marked.add(newest);
  }

  /** `Connection: keep-alive` again on the responses this drain marked, not started yet, that are not the newest. */
  #unmarkOlder(c: Connection): void {
    const newest = c.open.at(-1);
    for (const res of c.open) {
      if (res === newest || !this.#marked.has(res) || res.headersSent) continue;
      // Not removeHeader: Node then sends no Connection header at all (`_removedConnection`); this one stays open.
      res.setHeader('connection', 'keep-alive');
      this.#marked.delete(res);
    }
  }

  /** Starts the drain (the caller closed the listener). */
  drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    for (const c of this.#connections.values()) {
      if (c.open.length > 0) this.#markNewest(c);
      else this.#scheduleCheck(c);
    }
  }

  /** Checks a quiet connection once it has been quiet for {@link IDLE_GRACE_MS} and pending reads are done. */
  #scheduleCheck(c: Connection): void {
    if (c.checking) return;
    c.checking = true;
    const wait = Math.max(0, c.quietSince + IDLE_GRACE_MS - performance.now());
    setTimeout(
      () =>
        afterPendingReads(() => {
          c.checking = false;
          this.#closeIfIdle(c);
        }),
      wait,
    ).unref();
  }

  /**
   * Closes a connection between requests: no open response, nothing read for {@link IDLE_GRACE_MS}. A response
   * still open closes it through `Connection: close` or, when it closes, schedules this check again. Bytes read
   * since the connection became quiet are a request on its way: the check waits for another quiet spell (a client
   * that keeps dribbling header bytes meets the headers timeout, still enforced during the drain).
   */
  #closeIfIdle(c: Connection): void {
    const { socket } = c;
    if (socket.destroyed || socket.writableEnded || c.open.length > 0) return;
    if (socket.bytesRead !== c.quietBytes) {
      c.quietBytes = socket.bytesRead;
      c.quietSince = performance.now();
    }
    if (performance.now() - c.quietSince < IDLE_GRACE_MS) return this.#scheduleCheck(c);
    socket.destroy();
  }
}

const tracked = new WeakMap<object, Connections>();

/**
 * A server {@link closeGracefully} can close: node:http, or a net server with the same two close methods (the
 * agent's `tcp` trigger servers).
 */
export type ClosableServer = NetServer & Pick<Server, 'closeIdleConnections' | 'closeAllConnections'>;

/**
 * Tracks `server`'s connections for {@link closeGracefully} and returns `listener` wrapped to track its responses:
 * register the result as the server's request listener and hand it to any other event that starts a request
 * (a `checkContinue` listener's `onRequest`). Call it once per server, before `listen()`. While the server runs
 * the wrapper calls `listener` at once; during a drain, after the reads pending when the request arrived.
 */
export function trackConnections(server: Server, listener: RequestListener): RequestListener {
  let connections = tracked.get(server);
  if (connections === undefined) {
    connections = new Connections(server);
    tracked.set(server, connections);
  }
  const c = connections;
  return (req, res) => c.handle(listener, req, res);
}

/** True once {@link closeGracefully} started on a server that {@link trackConnections} tracks. */
export function isDraining(server: ClosableServer): boolean {
  return tracked.get(server)?.draining ?? false;
}

/**
 * Drains a server: it stops accepting connections (once the ones already waiting are taken); every response whose
 * headers are not sent yet says `Connection: close` (for pipelined requests, the newest one on its connection), so
 * Node ends each busy connection after its answer and no request that reached the server goes unanswered; a
 * connection with no open response is closed once it has been quiet for {@link IDLE_GRACE_MS}, after the requests
 * already in the kernel's buffer are read. After `ms` every connection still open is destroyed. Resolves true
 * when the server closed with every answer sent, false when `ms` cut connections. A server without
 * {@link trackConnections} (a `tcp` trigger server) gets the stop, its own `closeIdleConnections()` once the
 * listener is closed, and the `ms` bound.
 */
export function closeGracefully(server: ClosableServer, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve(true);
    let cut = false;
    const timer = setTimeout(() => {
      cut = true;
      server.closeAllConnections();
    }, ms);
    timer.unref();
    const connections = tracked.get(server);
    connections?.drain();
    // The connections already in the kernel's accept queue are taken (and answered with `Connection: close`)
    // first: closing the listener resets them, after their client may have sent a request.
    // net.Server's close, not http.Server's: that one also runs closeIdleConnections() (which cuts an answer
    // still being flushed and a request still in the kernel's buffer) and stops the checks of the headers and
    // request timeouts, which keep a client that never completes its request from holding the drain.
    afterPendingReads(() => {
      NetServer.prototype.close.call(server, () => {
        clearTimeout(timer);
        resolve(!cut);
      });
      // Only a server without request boundaries to wait for: a tracked one closes its quiet connections itself.
      if (connections === undefined) server.closeIdleConnections();
    });
  });
}
