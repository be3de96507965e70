import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  acceptedMediaTypes,
  createCheckContinueListener,
  type ReadUploadOptions,
} from '@org/multipart-limits';
import type { Limits, Timeouts } from '../limits.js';
import { trackConnections } from '../listen.js';
import { applyServerTimeouts } from '../listen-timeouts.js';
import { errorMiddleware, writeError } from '../http-errors.js';
import type { Output } from '../output.js';
import type { TriggerRoute } from './routes.js';
import type { RunTracker } from './run-tracker.js';
import type { HttpRunCounters } from './http-runs.js';
import type { AssetArchive } from '../assets/archive.js';
import { routeFor, triggerHandler, uploadOptionsOf, type TriggerContext } from './trigger-handler.js';
import { accessLog, ROUTE_LOCAL } from './access-log.js';
import { refusePackager } from './packager-handler.js';
import type { RuntimeMetrics } from '../observe/metrics.js';

/** What one trigger server needs. */
export interface TriggerServerOptions {
  readonly routes: readonly TriggerRoute[];
  readonly limits: Limits;
  readonly timeouts: Timeouts;
  readonly output: Output;
  readonly tracker: RunTracker;
  readonly runs?: HttpRunCounters | undefined;
  /** The packaged asset zip of this server (`serveFromPackagedAsset`). */
  readonly assets?: AssetArchive | undefined;
  /** Names the server in access log lines and metric labels (default: `-`). */
  readonly deploymentId?: string | undefined;
  readonly serverId?: string | undefined;
  readonly metrics?: RuntimeMetrics | undefined;
}

/** A trigger server's request listener, and its answer to an upload refused before the body was read. */
export interface TriggerRequestListener {
  (req: IncomingMessage, res: ServerResponse): void;
  /** A refusal of the `checkContinue` listener: access-logged and counted like any other trigger request. */
  refuse(err: unknown, req: IncomingMessage, res: ServerResponse, acceptPost?: string): void;
}

/**
 * The request listener of one trigger server: the access log (request id, one line, metrics), then the trigger
 * handler, its errors to the error middleware; no Express app in between (ADR 0102). They need nothing of Express
 * but `res.locals`; Express's per-request set-up (prototype swaps, router) cost about 7% of the main thread's time
 * per small request.
 */
export function createTriggerListener(
  ctx: TriggerContext,
  names: Partial<TriggerServerOptions> = {},
): TriggerRequestListener {
  type Listener = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  const log = accessLog({
    deploymentId: names.deploymentId ?? '-',
    serverId: names.serverId ?? '-',
    output: ctx.output,
    metrics: names.metrics,
  }) as unknown as Listener;
  const handle = triggerHandler(ctx) as unknown as (
    req: IncomingMessage,
    res: ServerResponse,
  ) => Promise<void>;
  const onError = errorMiddleware(ctx.output) as unknown as (
    err: unknown,
    req: IncomingMessage,
    res: ServerResponse,
    next: () => void,
  ) => void;
  const next = () => undefined;
  const withLocals = (res: ServerResponse): Record<string, unknown> =>
    ((res as ServerResponse & { locals: Record<string, unknown> }).locals = {});
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    withLocals(res);
    log(req, res, () => {
      handle(req, res).catch((err: unknown) => onError(err, req, res, next));
    });
  };
  const refuse = (err: unknown, req: IncomingMessage, res: ServerResponse, acceptPost?: string): void => {
    const locals = withLocals(res);
    let route: TriggerRoute | undefined;
    try {
      route = routeFor(ctx, req);
      locals[ROUTE_LOCAL] = route.stepId;
    } catch {
      // not a trigger path: `unmatched`
    }
    const packager = route?.packager;
    // A packager step's refusal is the packager's own answer, as its Express service gives it (ADR 0136).
    if (route !== undefined && packager !== undefined)
      log(req, res, () => refusePackager(ctx, route, packager, req, res, err));
    else log(req, res, () => writeError(req, res, err, ctx.output, acceptPost));
  };
  return Object.assign(listener, { refuse });
}

function acceptPostFor(ctx: TriggerContext, req: IncomingMessage): string | undefined {
  try {
    return acceptedMediaTypes(uploadOptionsOf(routeFor(ctx, req), ctx.limits));
  } catch {
    return undefined;
  }
}

/**
 * The upload options the `checkContinue` listener checks a request's headers against: none for an unknown path (the
 * app answers 404/405); for a packager step, the packager's own for its operation (with the step's cap), so an
 * over-limit upload is refused before `100 Continue` as the Express service refuses it (S8, ADR 0136).
 */
function continueOptionsFor(ctx: TriggerContext, req: IncomingMessage): ReadUploadOptions | undefined {
  let route: TriggerRoute;
  try {
    route = routeFor(ctx, req);
  } catch {
    return undefined;
  }
  const p = route.packager;
  if (p === undefined) return uploadOptionsOf(route, ctx.limits);
  // A capability without the check (or one that throws) leaves the refusal to its read, after `100 Continue`.
  try {
    return p.capability.uploadOptions?.(p.operation, route.multipartLimit);
  } catch {
    return undefined;
  }
}

/**
 * Whether an `Expect: 100-continue` request to a packager route with caller tokens must not be invited to send its
 * body (ADR 0140, S174): its token is missing, wrong or of another scope, as the capability's `authorize` (the check
 * its `read` runs first) judges from the headers. Such a request goes to the app without `100 Continue`; its read
 * refuses it before reading anything, so it gets the answer a request without `Expect` gets. A capability without
 * `authorize` cannot judge: no `100 Continue` either.
 */
function callerRefused(ctx: TriggerContext, req: IncomingMessage): boolean {
  let route: TriggerRoute;
  try {
    route = routeFor(ctx, req);
  } catch {
    return false;
  }
  const p = route.packager;
  if (p === undefined || p.dirs.callerTokenHashes === undefined) return false;
  if (p.capability.authorize === undefined) return true;
  try {
    p.capability.authorize(p.operation, req.headers.authorization, p.dirs);
    return false;
  } catch {
    return true;
  }
}

/**
 * A node:http server for one trigger server (not listening). `checkContinue` is answered by
 * multipart-limits so an over-limit upload is refused before `100 Continue` (S8), after a packager route's caller
 * token is judged (S174); header and request timeouts bound slow clients (checked often enough to fire within
 * 1 s, ADR 0083), and its connections are tracked so `closeAll` drains it (@org/http-drain, ADR 0129: every
 * answer during the drain says `Connection: close`, none is lost).
 */
export function createTriggerServer(options: TriggerServerOptions): Server {
  const ctx: TriggerContext = options;
  const app = createTriggerListener(ctx, options);
  const server = createServer(app);
  applyServerTimeouts(server, {
    headersMs: options.timeouts.headersMs,
    requestMs: options.timeouts.requestMs,
  });
  const checkContinue = createCheckContinueListener({
    optionsFor: (req) => continueOptionsFor(ctx, req),
    onRejected: (err, req, res) => app.refuse(err, req, res, acceptPostFor(ctx, req)),
    onRequest: app,
  });
  // S174: a caller the packager route refuses gets its 401/403 from the app, never `100 Continue`.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (callerRefused(ctx, req)) app(req, res);
    else checkContinue(req, res);
  });
  // After the request and checkContinue listeners: both are replaced by tracking ones (requests with `Expect` are
  // tracked through the checkContinue listener, whose onRequest is the plain app).
  trackConnections(server);
  return server;
}
