import type { IncomingMessage, ServerResponse } from 'node:http';
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { serveInspectPage } from '@org/inspect-page';
import {
  createPackagerOperations,
  createTokenCheck,
  type PackagerDirs,
  type TokenRecord,
} from '@org/packager';
import type { Limits } from './config.js';
import type { AppDeps } from './deps.js';
import { RequestError } from './errors.js';
import { errorMiddleware } from './http-errors.js';
import type { Logger } from './logger.js';
import { createMetrics, metricsRoute, type Metrics } from './metrics.js';
import { Readiness, readyRoute } from './readiness.js';
import { OPENAPI_DOCUMENT } from './openapi.js';
import { sendJson, simplePath, type TableHandler } from './plain-http.js';
import { keyGenRoute, operationRoute } from './operation-route.js';
import { requestLogStart, ROUTE_LOCAL, type RequestLogStart } from './request-log.js';
import { uploadOptionsByPath } from './upload.js';

/** What {@link createApp} needs; nothing here reads the environment or listens. */
export interface CreateAppOptions {
  limits: Limits;
  resourceDirs: readonly string[];
  log: Logger;
  /** Readiness as main.ts moves it (default: ready, for tests that build the app alone). */
  readiness?: Readiness | undefined;
  /** Where request metrics go (default: a fresh registry). */
  metrics?: Metrics | undefined;
  /** Caller token records (ADR 0140); none or empty: every operation is open. */
  tokens?: readonly TokenRecord[] | undefined;
}

/**
 * One route: the OpenAPI document lists exactly these (checked by test/routing.test.ts). A route's handler works
 * with node:http's request and response (ADR 0120); one that needs Express's API on them says so with
 * `express: true`, and then gets Express's prototypes, as every request did before.
 */
export type RouteSpec = { method: 'get' | 'post'; path: string } & (
  { handler: TableHandler; express?: false } | { handler: RequestHandler; express: true }
);

/**
 * Every route of the service: one per @org/packager operation, at `/<operation>` (ADR 0138), the service's own
 * (`/ready`, `/metrics`, `/openapi.json`), and the inspection page (`/inspect`, ADR 0146).
 */
export function routes(
  deps: AppDeps,
  ops: Required<Pick<CreateAppOptions, 'readiness' | 'metrics'>>,
): RouteSpec[] {
  const packager = deps.operations ?? createPackagerOperations({ limits: deps.limits });
  // /build-workflows finds `sourceWorkflow` files in the resource directories (no other source directories here).
  const dirs: PackagerDirs = { resourceDirs: deps.resourceDirs, workflowSourceDirs: [] };
  const post = (operation: Parameters<typeof operationRoute>[1]): RouteSpec => ({
    method: 'post',
    path: packager.spec(operation).path,
    handler: operationRoute(packager, operation, dirs, deps.tokens),
  });
  return [
    post('workflow-package'),
    post('bootstrap-encrypt'),
    post('string-encrypt'),
    post('workflow-compile'),
    post('workflow-hash'),
    post('workflow-inspect'),
    post('package-envelope'),
    post('build-workflows'),
    // key-gen answers through Express's `res.send`, as it always did (operation-route.ts).
    { method: 'get', path: '/key-gen', handler: keyGenRoute(packager, dirs, deps.tokens), express: true },
    { method: 'get', path: '/health', handler: operationRoute(packager, 'health', dirs) },
    { method: 'get', path: '/ready', handler: readyRoute(ops.readiness) },
    { method: 'get', path: '/metrics', handler: metricsRoute(ops.metrics) },
    { method: 'get', path: '/openapi.json', handler: (_req, res) => sendJson(res, OPENAPI_DOCUMENT) },
    // The static page that inspects a package in the browser (@org/inspect-page): open like /health whatever the
    // caller tokens, it holds no secret and runs no operation here (ADR 0146); GET and HEAD, 304 on its ETag.
    { method: 'get', path: '/inspect', handler: serveInspectPage },
  ];
}

/** 405 with `Allow` for a known path, else 404: both as problems. */
function fallback(table: readonly RouteSpec[]): RequestHandler {
  return (req, _res, next) => {
    const methods = table.filter((r) => r.path === req.path).map((r) => r.method.toUpperCase());
    if (methods.length === 0) {
      next(new RequestError('REQUEST_NOT_FOUND', 'no endpoint has this path'));
      return;
    }
    if (methods.includes('GET')) methods.push('HEAD');
    next(
      new RequestError('REQUEST_METHOD_NOT_ALLOWED', `this path takes ${methods.join(', ')}`, {
        headers: { Allow: methods.join(', ') },
      }),
    );
  };
}

/** `METHOD path` → route, with `HEAD` to a `GET` route (as Express routes it) unless the table has its own. */
function routeKeys(table: readonly RouteSpec[]): Map<string, RouteSpec> {
  const byKey = new Map<string, RouteSpec>();
  for (const r of table) {
    const method = r.method.toUpperCase();
    byKey.set(`${method} ${r.path}`, r);
    if (method === 'GET' && !table.some((x) => x.method === ('head' as string) && x.path === r.path))
      byKey.set(`HEAD ${r.path}`, r);
  }
  return byKey;
}

/**
 * Every route in one middleware: the `Map` of {@link routeKeys} from `METHOD path` to its route (and `HEAD` to a `GET` route, as
 * Express routes it). Exact and case-sensitive like the app's `strict routing` and `case sensitive routing`: the
 * routes have no parameters, so one lookup replaces Express's walk of a layer per route (ADR 0099). A handler's
 * rejected promise reaches the error middleware through Express's own handling of the returned promise.
 * `begin`, when given, is the request log's start, run first for every request: logging and dispatch then take
 * one Express layer instead of two (ADR 0112).
 */
export function dispatch(byKey: ReadonlyMap<string, RouteSpec>, begin?: RequestLogStart): RequestHandler {
  return (req, res, next) => {
    begin?.(req, res);
    const route = byKey.get(`${req.method} ${req.path}`);
    if (route === undefined) {
      next();
      return;
    }
    // The metrics label: the template, never the raw path (the table's paths have no parameters).
    res.locals[ROUTE_LOCAL] = route.path;
    // Express's request and response are node's with more on them: every handler takes them.
    return (route.handler as RequestHandler)(req, res, next);
  };
}

/** The Express app (docs/engineering.md §1): routes, the 404/405 fallback and the one error middleware. */
export function createApp(options: CreateAppOptions): express.Express {
  const deps: AppDeps = {
    ...options,
    uploads: uploadOptionsByPath(options.limits),
    operations: createPackagerOperations({ limits: options.limits }),
    tokens:
      options.tokens === undefined || options.tokens.length === 0
        ? undefined
        : createTokenCheck(options.tokens),
  };
  const ops = {
    readiness: options.readiness ?? new Readiness('ready'),
    metrics: options.metrics ?? createMetrics(),
  };
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  const table = routes(deps, ops);
  const begin = requestLogStart(options.log, ops.metrics);
  // The request log starts inside the dispatcher's layer (ADR 0112): every request, matched or not, passes it.
  const byKey = routeKeys(table);
  app.use(dispatch(byKey, begin));
  const otherwise = fallback(table);
  app.all('/{*splat}', otherwise);
  const onError = errorMiddleware(options.log);
  app.use(onError);
  listeners.set(app, routeFront(app, byKey, begin, otherwise, onError));
  return app;
}

/** The request listener of each app made by {@link createApp} (see {@link requestListener}). */
const listeners = new WeakMap<express.Express, (req: IncomingMessage, res: ServerResponse) => void>();

/**
 * What the HTTP server calls for each request of an app made by {@link createApp}: a request for a route of the
 * table goes straight to its handler (with the request log first), one for any other path through the app's
 * router to the 404/405 fallback (ADR 0112). Any other Express app is its own listener.
 */
export function requestListener(app: express.Express): (req: IncomingMessage, res: ServerResponse) => void {
  return listeners.get(app) ?? app;
}

/**
 * Serves the table's routes without Express's router (ADR 0112), as one dispatch layer behind it would: the
 * request and response get circular references and `locals` (what `app.handle` does), the request log starts,
 * the route template is noted, and the handler runs. Express's prototypes go under them only for an
 * `express: true` route, a URL that is not a plain path, and before the error middleware or the fallback runs
 * (ADR 0120): a table route's handler works with node's objects. A handler's throw or rejected promise
 * goes to the app's error middleware, and a `next()` without an error to the 404/405 fallback, as Express's
 * router passes them on. A path no route has goes through the whole app (`app(req, res)`).
 */
export function routeFront(
  app: express.Express,
  byKey: ReadonlyMap<string, RouteSpec>,
  begin: RequestLogStart,
  otherwise: RequestHandler,
  onError: ErrorRequestHandler,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { request, response } = app;
  return (message, reply) => {
    const req = message as Request;
    const res = reply as Response;
    req.res = res;
    res.req = req;
    // Express's prototypes go under a request only where its API is used: not for a table route whose handler
    // takes node's objects (ADR 0120). A URL that is not a plain path is read by Express, as before.
    let expressApi = false;
    const toExpress = (): void => {
      if (expressApi) return;
      expressApi = true;
      Object.setPrototypeOf(req, request);
      Object.setPrototypeOf(res, response);
    };
    let path = simplePath(req.url);
    if (path === undefined) {
      toExpress();
      path = req.path;
    }
    const route = byKey.get(`${req.method} ${path}`);
    if (route === undefined) {
      toExpress();
      app(req, res);
      return;
    }
    if (route.express === true) toExpress();
    // What Express's router sets before a layer runs.
    req.originalUrl ||= req.url;
    req.baseUrl = '';
    res.locals ??= Object.create(null) as Record<string, unknown>;
    begin(req, res);
    res.locals[ROUTE_LOCAL] = route.path;
    const fail = (err: unknown): void => {
      toExpress();
      try {
        // The error middleware answers every error; nothing is passed on from it.
        onError(err, req, res, () => lastResort(res));
      } catch {
        lastResort(res);
      }
    };
    const next: NextFunction = (err?: unknown) => {
      // No error (the router's test is truthiness), or a skip: on to the fallback, the next layer.
      if (!err || err === 'route' || err === 'router') {
        toExpress();
        run(otherwise, req, res, fail);
      } else fail(err);
    };
    run(route.handler as RequestHandler, req, res, next);
  };
}

/** Runs a handler as Express's router does: a throw or a rejected promise goes to `next(err)`. */
function run(handler: RequestHandler, req: Request, res: Response, next: NextFunction): void {
  try {
    const out: unknown = handler(req, res, next);
    // Any thenable, as the router's own check.
    if (typeof out === 'object' && out !== null && typeof (out as PromiseLike<void>).then === 'function')
      (out as PromiseLike<void>).then(undefined, (err: unknown) =>
        next(err ?? new Error('Rejected promise')),
      );
  } catch (err) {
    next(err);
  }
}

/** If the error middleware itself failed (it does not): a bare 500, or the connection cut after a started answer. */
function lastResort(res: Response): void {
  if (res.headersSent) res.destroy();
  else {
    res.statusCode = 500;
    res.end();
  }
}
