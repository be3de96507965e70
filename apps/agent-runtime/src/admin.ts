import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { AgentError, applyServerTimeouts, requestIdOf } from '@org/workflow-runtime';
import type { AdminListen } from './startup/config.js';

/** Where the agent is in its life: `ready` from the moment every listener is open until a drain starts. */
export type ReadinessState = 'starting' | 'ready' | 'draining';

/** The readiness main.ts moves and `GET /ready` reads. */
export class Readiness {
  #state: ReadinessState = 'starting';
  get state(): ReadinessState {
    return this.#state;
  }
  set(state: ReadinessState): void {
    this.#state = state;
  }
}

/** What the admin listener serves. */
export interface AdminOptions {
  readonly readiness: Readiness;
  readonly registry: Registry;
}

const PATHS = new Set(['/health', '/ready', '/metrics']);

function send(res: ServerResponse, status: number, type: string, body: string, headers: object = {}): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

function problem(res: ServerResponse, status: 404 | 405, reqId: string): void {
  const code = status === 404 ? 'AGENT_ROUTE_NOT_FOUND' : 'AGENT_METHOD_NOT_ALLOWED';
  const body = {
    type: `urn:example:oapp:problem:${code.toLowerCase().replaceAll('_', '-')}`,
    title: status === 404 ? 'Route not found' : 'Method not allowed',
    status,
    detail:
      status === 404 ? 'the admin listener serves /health, /ready and /metrics' : 'this path takes GET, HEAD',
    code,
  };
  const headers = { 'x-request-id': reqId, ...(status === 405 ? { allow: 'GET, HEAD' } : {}) };
  send(res, status, 'application/problem+json', JSON.stringify(body), headers);
}

async function answer(options: AdminOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const reqId = requestIdOf(req.headers['x-request-id']);
  const path = (req.url ?? '').split('?')[0] ?? '';
  if (!PATHS.has(path)) return problem(res, 404, reqId);
  if (req.method !== 'GET' && req.method !== 'HEAD') return problem(res, 405, reqId);
  const id = { 'x-request-id': reqId };
  if (path === '/health') return send(res, 200, 'application/json', '{"ok":true}', id);
  if (path === '/ready') {
    const status = options.readiness.state;
    const body = JSON.stringify({ ok: status === 'ready', status });
    return send(res, status === 'ready' ? 200 : 503, 'application/json', body, id);
  }
  send(res, 200, options.registry.contentType, await options.registry.metrics(), id);
}

/**
 * The admin listener (`AGENT_ADMIN_PORT`, `AGENT_ADMIN_BIND`): `GET /health` (liveness), `GET /ready` (200 once
 * every trigger server listens and the deployments are loaded, 503 while starting or draining) and
 * `GET /metrics` (Prometheus). Apart from the trigger servers, whose paths belong to the workflows. Not
 * listening; the caller listens.
 */
export function createAdminServer(options: AdminOptions): Server {
  const server = createServer((req, res) => {
    answer(options, req, res).catch(() => {
      if (!res.headersSent)
        send(res, 500, 'application/problem+json', '{"type":"about:blank","status":500,"code":"INTERNAL"}');
      else res.destroy();
    });
  });
  // The admin endpoints answer small, fast requests only; the timeouts are checked within 1 s of their value.
  applyServerTimeouts(server, { headersMs: 10_000, requestMs: 10_000 });
  return server;
}

/**
 * Why the admin listener cannot listen, naming the variables that set its address (issue 27): a taken port names
 * `AGENT_ADMIN_PORT` and how to choose another, an address that cannot be bound names `AGENT_ADMIN_BIND`.
 */
function listenFailure(at: AdminListen, errno: string): string {
  const where = `the admin listener cannot listen on ${at.bind}:${at.port} (${errno})`;
  if (errno === 'EADDRINUSE')
    return `${where}: port ${at.port} (AGENT_ADMIN_PORT) is in use; set AGENT_ADMIN_PORT to a free port, 0 for any free port, or off`;
  if (errno === 'EACCES')
    return `${where}: port ${at.port} (AGENT_ADMIN_PORT) needs privileges; set AGENT_ADMIN_PORT to a port above 1023, 0 or off`;
  return `${where}: check AGENT_ADMIN_BIND (${at.bind}) and AGENT_ADMIN_PORT (${at.port})`;
}

/**
 * Listens on the admin address (main.ts does so first, so `/ready` answers 503 while the deployments load).
 * @throws {@link AgentError} `AGENT_LISTEN_FAILED` naming the address, the errno code and the variable to change.
 */
export function listenAdmin(server: Server, at: AdminListen): Promise<{ port: number; address: string }> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) =>
      reject(new AgentError('AGENT_LISTEN_FAILED', listenFailure(at, err.code ?? 'error')));
    server.once('error', failed);
    server.listen(at.port, at.bind, () => {
      server.removeListener('error', failed);
      const a = server.address() as AddressInfo;
      resolve({ port: a.port, address: a.address });
    });
  });
}
