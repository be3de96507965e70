import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createCheckContinueListener, type UploadError } from '@org/multipart-limits';
import type express from 'express';
import { requestListener } from './app.js';
import { trackConnections } from '@org/http-drain';
import type { Limits, Timeouts } from './config.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { writeProblem } from '@org/http-problem';
import { problemBody } from './http-errors.js';
import { requestIdFrom } from '@org/http-problem';
import { uploadOptionsByPath } from './upload.js';
import {
  createPackagerOperations,
  createTokenCheck,
  OPERATION_SCOPES,
  type PackagerOperation,
  type TokenCheck,
  type TokenRecord,
} from '@org/packager';

/**
 * Refuses an upload from its headers alone (`Expect: 100-continue`, S8): no `100 Continue`, nothing read,
 * `Connection: close` (already set by the listener). Runs outside Express, so it writes the problem itself.
 */
function refuser(log: Logger, routes: ReadonlySet<string>, metrics: Metrics | undefined) {
  return (error: UploadError, req: IncomingMessage, res: ServerResponse): void => {
    const reqId = requestIdFrom(req.headers['x-request-id']);
    const body = problemBody(error, reqId);
    const { status } = body;
    writeProblem(req, res, body, { connection: 'close' });
    log.info('request', {
      reqId,
      method: req.method,
      path: (req.url ?? '').split('?')[0],
      status,
      ms: 0,
      code: error.code,
      refusedBeforeBody: true,
    });
    const path = (req.url ?? '').split('?')[0] ?? '';
    metrics?.observe({
      route: routes.has(path) ? path : 'unmatched',
      method: req.method ?? 'GET',
      status,
      seconds: 0,
      code: error.code,
    });
  };
}

/**
 * Whether an `Expect: 100-continue` request may be invited to send its body as far as its caller token goes
 * (ADR 0140, S174): true for a path that needs none, or a token the operation accepts. `check.authorize` is the
 * check the route itself runs first, so the route's answer to a refused request is the same.
 */
function callerAcceptor(tokens: readonly TokenRecord[] | undefined): (req: IncomingMessage) => boolean {
  if (tokens === undefined || tokens.length === 0) return () => true;
  const check: TokenCheck = createTokenCheck(tokens);
  const ops = createPackagerOperations();
  const guarded = new Map<string, PackagerOperation>();
  for (const [operation, scope] of Object.entries(OPERATION_SCOPES) as [PackagerOperation, unknown][])
    if (scope !== null) guarded.set(ops.spec(operation).path, operation);
  return (req) => {
    const operation = guarded.get((req.url ?? '').split('?')[0] ?? '');
    if (operation === undefined) return true;
    try {
      check.authorize(req.headers.authorization, operation);
      return true;
    } catch {
      return false;
    }
  };
}

/** The longest gap between two of Node's checks of the header and request timeouts. */
export const MAX_CONNECTIONS_CHECK_MS = 1000;

/**
 * How often Node looks for connections past their header or request timeout: a quarter of the smaller one that
 * is on, between 10 ms and {@link MAX_CONNECTIONS_CHECK_MS}. Node's default, 30 s, let a 3 s header timeout cut
 * a slow client anywhere from 3 to 33 s; with this a timeout fires at most 1 s late (ADR 0083).
 */
export function connectionsCheckingIntervalOf(timeouts: Pick<Timeouts, 'headersMs' | 'requestMs'>): number {
  const on = [timeouts.headersMs, timeouts.requestMs].filter((ms) => ms > 0);
  const smallest = Math.min(MAX_CONNECTIONS_CHECK_MS * 4, ...on);
  return Math.max(10, Math.min(MAX_CONNECTIONS_CHECK_MS, Math.floor(smallest / 4)));
}

/**
 * The HTTP server around the app: the multipart-limits `checkContinue` listener and explicit timeouts
 * (headers, whole request, keep-alive), checked often enough to fire within 1 s of their value. Connections are
 * tracked so `closeGracefully` (@org/http-drain) can drain it. Listening is the caller's job.
 * `tokens`, the app's caller token records (ADR 0140): an `Expect: 100-continue` request without a token its
 * operation accepts gets no `100 Continue`; the app answers it (401/403) from its headers, as without `Expect`.
 */
export function createHttpServer(
  app: express.Express,
  limits: Limits,
  timeouts: Timeouts,
  log: Logger,
  metrics?: Metrics,
  tokens?: readonly TokenRecord[],
): Server {
  const uploads = uploadOptionsByPath(limits);
  const server = createServer();
  // The app's own listener (its routes without Express's router, anything else through the app, ADR 0112),
  // wrapped so that closeGracefully can drain the server (@org/http-drain).
  const listener = trackConnections(server, requestListener(app));
  server.on('request', listener);
  const accepts = callerAcceptor(tokens);
  const checkContinue = createCheckContinueListener({
    optionsFor: (req) => uploads.get((req.url ?? '').split('?')[0] ?? ''),
    onRejected: refuser(log, new Set(uploads.keys()), metrics),
    onRequest: listener,
  });
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    // S174: the token is judged before the body is invited. A refused caller goes to the app without
    // `100 Continue`: its route refuses the token before reading anything (with `Connection: close`, as every
    // refusal of an `Expect` request), so the answer is the bytes a request without `Expect` gets.
    if (accepts(req)) checkContinue(req, res);
    else listener(req, res);
  });
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  // Read by Node when the server starts listening (its default is 30 s).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    connectionsCheckingIntervalOf(timeouts);
  return server;
}
