import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Server } from 'node:http';
import { AgentError } from './errors.js';
import type { Output } from './output.js';

/** A listening trigger server, as logged in the `listening` line. */
export interface Listening {
  readonly deploymentId: string;
  readonly id: string;
  readonly port: number;
  readonly address: string;
}

/** A trigger server: a node:http server, or a `tcp` trigger server with the same two close methods. */
export type TriggerListener = NetServer & Pick<Server, 'closeIdleConnections' | 'closeAllConnections'>;

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

/** Stops accepting, closes idle connections, and after `ms` closes the rest. */
export async function closeAll(agent: ServerSet, ms: number): Promise<void> {
  await Promise.all(
    agent.servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (!s.server.listening) return resolve();
          s.server.close(() => resolve());
          s.server.closeIdleConnections();
          setTimeout(() => s.server.closeAllConnections(), ms).unref();
        }),
    ),
  );
}
