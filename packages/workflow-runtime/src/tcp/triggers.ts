import type { BootstrapServer } from '@org/workflow-compiler';
import type { StepInfo, StepRef } from '@org/workflow-engine';
import { AgentError } from '../errors.js';
import type { Framing } from './framing.js';

/** One `tcp` trigger, ready to serve (ADR 0080). */
export interface TcpRoute {
  readonly deploymentId: string;
  readonly serverId: string;
  readonly step: StepRef;
  readonly framing: Framing;
  /** Messages per step run (≥ 1). */
  readonly batchSize: number;
  /** How long a partial batch waits for more messages (ms; 0: runs at once). */
  readonly batchWindowMs: number;
  readonly noTrace: boolean;
}

interface TcpTrigger {
  server: string;
  fixedLength?: number;
  delimiter?: string;
  stripDelimiter?: unknown;
  batchSize?: number;
  maxBatchWindowMillis?: number;
  noTrace?: unknown;
}

const isTrue = (v: unknown): boolean => v === true || v === 'true';

/** True for an `allowHttpServerAccess` entry with `tcp: true`. */
export function isTcpServer(entry: BootstrapServer): boolean {
  return isTrue(entry.tcp);
}

/** True for an `allowHttpServerAccess` entry with `inProcOnly: true` (no network listener). */
export function isInProcOnly(entry: BootstrapServer): boolean {
  return isTrue(entry.inProcOnly);
}

function triggersOf(step: StepInfo): { http?: { server?: unknown }; tcp?: TcpTrigger } {
  return typeof step.trigger === 'object' && step.trigger !== null ? step.trigger : {};
}

function invalid(deploymentId: string, stepId: string, what: string): AgentError {
  return new AgentError('AGENT_TRIGGER_INVALID', `deployment "${deploymentId}", step "${stepId}": ${what}`);
}

function framingOf(deploymentId: string, step: StepInfo, t: TcpTrigger, maxFrameBytes: number): Framing {
  if (t.fixedLength !== undefined) {
    if (t.fixedLength > maxFrameBytes)
      throw invalid(
        deploymentId,
        step.stepId,
        `trigger.tcp.fixedLength is over the ${maxFrameBytes}-byte message limit`,
      );
    return { kind: 'fixed', length: t.fixedLength };
  }
  return {
    kind: 'delimiter',
    delimiter: Buffer.from(t.delimiter ?? '\n', 'utf8'),
    strip: isTrue(t.stripDelimiter),
  };
}

/**
 * The `tcp` triggers of one deployment by server id, after the start-up checks: a tcp trigger names a server
 * with `tcp: true` (else `AGENT_TRIGGER_INVALID`, the reference's `TT3`), one tcp trigger per server
 * (`AGENT_TRIGGER_DUPLICATE`), no `http` trigger on a tcp server, no tcp server with `inProcOnly`, and a
 * `fixedLength` within the message limit.
 * @throws {@link AgentError} `AGENT_TRIGGER_INVALID`, `AGENT_TRIGGER_DUPLICATE`.
 */
export function tcpRoutes(
  deploymentId: string,
  steps: readonly StepInfo[],
  servers: readonly BootstrapServer[],
  maxFrameBytes: number,
): Map<string, TcpRoute> {
  const byId = new Map(servers.map((s) => [s.id, s]));
  for (const s of servers)
    if (isTcpServer(s) && isInProcOnly(s))
      throw new AgentError(
        'AGENT_TRIGGER_INVALID',
        `deployment "${deploymentId}", server "${s.id}": tcp and inProcOnly exclude each other`,
      );
  const out = new Map<string, TcpRoute>();
  for (const step of steps) {
    const { http, tcp } = triggersOf(step);
    const httpServer = typeof http?.server === 'string' ? byId.get(http.server) : undefined;
    if (httpServer !== undefined && isTcpServer(httpServer))
      throw invalid(
        deploymentId,
        step.stepId,
        `server "${httpServer.id}" is a tcp server (tcp: true); http triggers need an http server`,
      );
    if (tcp === undefined) continue;
    const server = byId.get(tcp.server);
    if (server === undefined || !isTcpServer(server))
      throw invalid(
        deploymentId,
        step.stepId,
        `server "${tcp.server}" is not an allowHttpServerAccess entry with tcp: true`,
      );
    const first = out.get(server.id);
    if (first !== undefined)
      throw new AgentError(
        'AGENT_TRIGGER_DUPLICATE',
        `deployment "${deploymentId}": steps "${first.step.stepId}" and "${step.stepId}" both have a tcp trigger on server "${server.id}"`,
      );
    out.set(server.id, {
      deploymentId,
      serverId: server.id,
      step: { stepId: step.stepId, workflowIndex: step.workflowIndex },
      framing: framingOf(deploymentId, step, tcp, maxFrameBytes),
      batchSize: tcp.batchSize ?? 1,
      batchWindowMs: tcp.maxBatchWindowMillis ?? 0,
      noTrace: isTrue(tcp.noTrace),
    });
  }
  return out;
}
