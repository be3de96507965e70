import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';

/** The per-server state {@link trackConnections} keeps and {@link closeGracefully} uses. */
class Connections {
  readonly #server: Server;
  /** Responses not yet closed (finished or aborted). */
  readonly #open = new Set<ServerResponse>();
  readonly #sockets = new Set<Socket>();
  #draining = false;

  constructor(server: Server) {
    this.#server = server;
    // In-process calls (ADR 0079) hand the server an in-memory stream the same way; it is tracked alike.
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    const onRequest = (req: IncomingMessage, res: ServerResponse) => this.#request(req, res);
    // A request with `Expect` goes to these instead of 'request' when the server listens for them.
    for (const event of ['checkContinue', 'checkExpectation'] as const)
      if (server.listenerCount(event) > 0) server.prependListener(event, onRequest);
    server.prependListener('request', onRequest);
  }

  get draining(): boolean {
    return this.#draining;
  }

  #request(_req: IncomingMessage, res: ServerResponse): void {
    if (this.#open.has(res)) return;
    this.#open.add(res);
    if (this.#draining) lastOnConnection(res, () => this.#server.closeIdleConnections());
    res.once('close', () => {
      this.#open.delete(res);
      if (this.#draining) this.#sweep();
    });
  }

  /** Starts the drain (the caller closed the listener): every unanswered response says `Connection: close`. */
  drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    for (const res of this.#open) lastOnConnection(res, () => this.#server.closeIdleConnections());
    this.#sweep();
  }

  /**
   * Idle keep-alive sockets close now. Once no response is open, every socket left that the server is not
   * already ending (an idle one, or a client still sending headers) is destroyed: nothing is running for it.
   */
  #sweep(): void {
    this.#server.closeIdleConnections();
    if (this.#open.size > 0) return;
    for (const socket of this.#sockets) {
      if (socket.writableEnded) continue; // ending after a `Connection: close` answer
      // Bytes of an earlier answer may still be queued: flush them first.
      if (socket.writableLength > 0) socket.end();
      else socket.destroy();
    }
  }
}

/**
 * Makes `res` the last response of its connection: `Connection: close` when its headers are not sent yet (Node
 * then ends the socket after it); otherwise, when it finishes, the now idle connection is closed.
 */
function lastOnConnection(res: ServerResponse, closeIdle: () => void): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
  else res.once('finish', () => setImmediate(closeIdle));
}

const tracked = new WeakMap<object, Connections>();

/** A server {@link closeGracefully} can close: node:http, or a net server with the same two close methods. */
export type ClosableServer = NetServer & Pick<Server, 'closeIdleConnections' | 'closeAllConnections'>;

/**
 * Tracks a node:http server's sockets and responses so {@link closeGracefully} can drain it. Call it once, before
 * `listen()` and after any `checkContinue` / `checkExpectation` listener is added (requests with `Expect` are
 * tracked through those).
 */
export function trackConnections(server: Server): void {
  if (!tracked.has(server)) tracked.set(server, new Connections(server));
}

/** True once {@link closeGracefully} started on a server that {@link trackConnections} tracks. */
export function isDraining(server: ClosableServer): boolean {
  return tracked.get(server)?.draining ?? false;
}

/**
 * Drains a server and resolves when it is closed. It stops accepting connections at once. Every response not
 * yet started (a request in flight, or one that still arrives on an open connection) says `Connection: close`,
 * so no client reuses the connection; idle keep-alive sockets close now, and the others as their last response
 * finishes. When no response is open, the sockets left (clients that have not sent a whole request) are
 * closed. After `ms` every connection still open is destroyed. A server not tracked by
 * {@link trackConnections} only gets the stop, the idle close and the `ms` bound.
 */
export function closeGracefully(server: ClosableServer, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    tracked.get(server)?.drain();
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), ms).unref();
  });
}
