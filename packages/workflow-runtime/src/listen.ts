import type { RequestListener, Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import {
  closeGracefully as drain,
  isDraining as isServerDraining,
  trackConnections as trackListener,
} from '@org/http-drain';
import { AgentError } from './errors.js';
import type { Output } from './output.js';

// The drain is the packager's too, in the private, bundled @org/http-drain (ADR 0129). Typed here so the published
// declarations never name that package.

/** A server {@link closeGracefully} can close: node:http, or a net server with the same two close methods. */
export type ClosableServer = NetServer & Pick<Server, 'closeIdleConnections' | 'closeAllConnections'>;

/** The events whose listener starts a request: `Expect` requests go to the last two when they have listeners. */
const REQUEST_EVENTS = ['request', 'checkContinue', 'checkExpectation'] as const;

const trackedServers = new WeakSet<Server>();

/**
 * Tracks a node:http server's connections and responses so {@link closeGracefully} can drain it: each `request`,
 * `checkContinue` and `checkExpectation` listener the server has is replaced, in its place, by one that tracks the
 * response and, during a drain, runs after the reads pending when the request arrived. Call it once, before
 * `listen()` and after those listeners are added (one added later is not tracked). A `checkContinue` listener
 * hands an accepted request to its own handler, not to the server's `request` event.
 */
export function trackConnections(server: Server): void {
  if (trackedServers.has(server)) return;
  trackedServers.add(server);
  for (const event of REQUEST_EVENTS)
    for (const listener of server.listeners(event) as RequestListener[]) {
      server.removeListener(event, listener);
      server.on(event, trackListener(server, listener));
    }
}

/** True once {@link closeGracefully} started on a server that {@link trackConnections} tracks. */
export const isDraining: (server: ClosableServer) => boolean = isServerDraining;

/**
 * Drains a server and resolves when it is closed. It stops accepting connections once those already in the
 * kernel's accept queue are taken. Every response not started yet says `Connection: close` (of requests a client
 * pipelined, the last one read), so Node ends each busy connection after its answer; an answer still being
 * written is never cut; a connection with no open response is closed once it has read nothing for 250 ms, after
 * the requests already in the kernel's buffer are read and answered. After `ms` every connection still open is
 * destroyed. A server not tracked by {@link trackConnections} (a `tcp` trigger server) gets the stop, its own
 * `closeIdleConnections()` and the `ms` bound.
 */
export async function closeGracefully(server: ClosableServer, ms: number): Promise<void> {
  await drain(server, ms);
}

/** A listening trigger server, as logged in the `listening` line. */
export interface Listening {
  readonly deploymentId: string;
  readonly id: string;
  readonly port: number;
  readonly address: string;
}

/** A trigger server: a node:http server, or a `tcp` trigger server with the same two close methods. */
export type TriggerListener = ClosableServer;

/** One trigger server (created, not listening). */
export interface ServerSpec {
  readonly deploymentId: string;
  readonly id: string;
  readonly port: number;
  readonly bindAddress: string;
  readonly server: TriggerListener;
}

/** What {@link listenAll} and {@link closeAll} work on: the servers, and where listen errors are logged. */
export interface ServerSet {
  readonly servers: readonly ServerSpec[];
  readonly output: Output;
}

/**
 * Listens on every trigger server.
 * @throws {@link AgentError} `AGENT_LISTEN_FAILED` on the first listen error (for example EADDRINUSE).
 */
export async function listenAll(agent: ServerSet): Promise<Listening[]> {
  return Promise.all(
    agent.servers.map(
      (s) =>
        new Promise<Listening>((resolve, reject) => {
          s.server.once('error', (err: NodeJS.ErrnoException) =>
            reject(
              new AgentError(
                'AGENT_LISTEN_FAILED',
                `deployment "${s.deploymentId}", server "${s.id}" cannot listen on ${s.bindAddress}:${s.port} (${err.code ?? 'error'})`,
              ),
            ),
          );
          s.server.listen(s.port, s.bindAddress, () => {
            s.server.removeAllListeners('error');
            s.server.on('error', (err: NodeJS.ErrnoException) =>
              agent.output.error('server error', {
                deploymentId: s.deploymentId,
                server: s.id,
                code: err.code,
              }),
            );
            const a = s.server.address() as AddressInfo;
            resolve({ deploymentId: s.deploymentId, id: s.id, port: a.port, address: a.address });
          });
        }),
    ),
  );
}

/**
 * Closes every trigger server with {@link closeGracefully}: no new connections, every answer from now on says
 * `Connection: close` and no request that reached a server goes unanswered; a connection closes after its last
 * answer, or once quiet; after `ms` the connections left are destroyed. Resolves when every server is closed.
 */
export async function closeAll(agent: ServerSet, ms: number): Promise<void> {
  await Promise.all(agent.servers.map((s) => closeGracefully(s.server, ms)));
}
