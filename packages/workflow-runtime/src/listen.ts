import type { AddressInfo } from 'node:net';
import { AgentError } from './errors.js';
import { closeGracefully, type ClosableServer } from './listen-drain.js';
import type { Output } from './output.js';

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
 * `Connection: close`, idle sockets close now and the others once their last response is sent; after `ms` the
 * connections left are destroyed. Resolves when every server is closed.
 */
export async function closeAll(agent: ServerSet, ms: number): Promise<void> {
  await Promise.all(agent.servers.map((s) => closeGracefully(s.server, ms)));
}
