import { Server as NetServer, type Socket } from 'node:net';
import { RepeatLimiter, type WorkflowEngine } from '@org/workflow-engine';
import type { HttpRunCounters } from '../http/http-runs.js';
import type { RunTracker } from '../http/run-tracker.js';
import type { Output } from '../output.js';
import { RunSlots, TcpConnection, type TcpRunFailure } from './connection.js';
import type { TcpLimits } from './limits.js';
import type { TcpRoute } from './triggers.js';

/** What one `tcp` trigger server needs. */
export interface TcpServerOptions {
  readonly deploymentId: string;
  readonly serverId: string;
  /** The server's tcp trigger; without one every connection is closed at once. */
  readonly route: TcpRoute | undefined;
  readonly engine: WorkflowEngine;
  readonly limits: TcpLimits;
  readonly output: Output;
  readonly tracker: RunTracker;
  /** Counts each run (the runtime's `step counters`). */
  readonly runs?: HttpRunCounters | undefined;
}

/** Identical run failures are logged once, then summarised once a minute (as the scheduler does, ADR 0056). */
const FAILURE_REPEAT_MS = 60_000;

/**
 * A `tcp` trigger server (node:net, not listening): at most `maxConnections` connections (further ones are
 * closed at accept; the first such refusal is logged), its own run slots, and the `closeIdleConnections` /
 * `closeAllConnections` pair an HTTP server has, so `closeAll` treats both alike.
 */
export class TcpTriggerServer extends NetServer {
  readonly #connections = new Set<TcpConnection>();
  #dropped = 0;

  constructor(o: TcpServerOptions) {
    super();
    this.maxConnections = o.limits.maxConnections;
    const fields = { deploymentId: o.deploymentId, server: o.serverId };
    const route = o.route;
    const shared =
      route &&
      ({
        route,
        engine: o.engine,
        limits: o.limits,
        output: o.output,
        tracker: o.tracker,
        runs: o.runs,
        slots: new RunSlots(o.limits.runsInFlight),
        failures: new RepeatLimiter<TcpRunFailure>({
          intervalMs: FAILURE_REPEAT_MS,
          emit: (f, repeated) => {
            const line = { ...fields, stepId: route.step.stepId, trigger: 'tcp' };
            const detail = f.outcome === 'errored' ? { errors: f.text } : { code: f.text };
            if (repeated > 0) o.output.warn('step error repeated', { ...line, ...detail, repeated });
            else if (f.outcome === 'errored') o.output.warn('step errored', { ...line, ...detail });
            else o.output.error('step run failed', { ...line, ...detail });
          },
        }),
      } as const);
    this.on('connection', (socket: Socket) => {
      if (shared === undefined) return void socket.destroy();
      const c: TcpConnection = new TcpConnection(socket, shared, () => this.#connections.delete(c));
      this.#connections.add(c);
    });
    this.on('drop', () => {
      if (this.#dropped++ === 0)
        o.output.warn('tcp connections refused', {
          ...fields,
          reason: 'maxConnections',
          maxConnections: o.limits.maxConnections,
        });
    });
  }

  /** Connections open now. */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Connections closed at accept because `maxConnections` were open. */
  get droppedConnections(): number {
    return this.#dropped;
  }

  /** Closes connections with nothing queued or running. */
  closeIdleConnections(): void {
    for (const c of this.#connections) if (c.isIdle) c.destroy();
  }

  /** Closes every connection (queued messages are dropped). */
  closeAllConnections(): void {
    for (const c of this.#connections) c.destroy();
  }
}

/** A `tcp` trigger server for one `allowHttpServerAccess` entry with `tcp: true`. */
export function createTcpTriggerServer(options: TcpServerOptions): TcpTriggerServer {
  return new TcpTriggerServer(options);
}
