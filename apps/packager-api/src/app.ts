import express, { type RequestHandler } from 'express';
import type { Limits } from './config.js';
import type { AppDeps } from './deps.js';
import { RequestError } from './errors.js';
import { errorMiddleware } from './http-errors.js';
import type { Logger } from './logger.js';
import { createMetrics, metricsRoute, type Metrics } from './metrics.js';
import { Readiness, readyRoute } from './readiness.js';
import { OPENAPI_DOCUMENT } from './openapi.js';
import { requestLog, ROUTE_LOCAL } from './request-log.js';
import { bootstrapEncrypt, stringEncrypt } from './routes/encrypt.js';
import { health, keyGen } from './routes/key-gen.js';
import { packageEnvelope, workflowInspect } from './routes/packages.js';
import { workflowPackage } from './routes/workflow-package.js';
import { buildWorkflowsRoute, workflowCompile, workflowHash } from './routes/workflows.js';
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
}

/** One route: the OpenAPI document lists exactly these (checked by test/routing.test.ts). */
export interface RouteSpec {
  method: 'get' | 'post';
  path: string;
  handler: RequestHandler;
}

/** Every route of the service. */
export function routes(
  deps: AppDeps,
  ops: Required<Pick<CreateAppOptions, 'readiness' | 'metrics'>>,
): RouteSpec[] {
  return [
    { method: 'post', path: '/workflow-package', handler: workflowPackage(deps) },
    { method: 'post', path: '/bootstrap-encrypt', handler: bootstrapEncrypt(deps) },
    { method: 'post', path: '/string-encrypt', handler: stringEncrypt(deps) },
    { method: 'post', path: '/workflow-compile', handler: workflowCompile(deps) },
    { method: 'post', path: '/workflow-hash', handler: workflowHash(deps) },
    { method: 'post', path: '/workflow-inspect', handler: workflowInspect(deps) },
    { method: 'post', path: '/package-envelope', handler: packageEnvelope(deps) },
    { method: 'post', path: '/build-workflows', handler: buildWorkflowsRoute(deps) },
    { method: 'get', path: '/key-gen', handler: keyGen() },
    { method: 'get', path: '/health', handler: health() },
    { method: 'get', path: '/ready', handler: readyRoute(ops.readiness) },
    { method: 'get', path: '/metrics', handler: metricsRoute(ops.metrics) },
    { method: 'get', path: '/openapi.json', handler: (_req, res) => void res.json(OPENAPI_DOCUMENT) },
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

/**
 * Every route in one middleware: a `Map` from `METHOD path` to its handler (and `HEAD` to a `GET` route, as
 * Express routes it). Exact and case-sensitive like the app's `strict routing` and `case sensitive routing`: the
 * routes have no parameters, so one lookup replaces Express's walk of a layer per route (ADR 0099). A handler's
 * rejected promise reaches the error middleware through Express's own handling of the returned promise.
 */
export function dispatch(table: readonly RouteSpec[]): RequestHandler {
  const byKey = new Map<string, RouteSpec>();
  for (const r of table) {
    const method = r.method.toUpperCase();
    byKey.set(`${method} ${r.path}`, r);
    if (method === 'GET' && !table.some((x) => x.method === ('head' as string) && x.path === r.path))
      byKey.set(`HEAD ${r.path}`, r);
  }
  return (req, res, next) => {
    const route = byKey.get(`${req.method} ${req.path}`);
    if (route === undefined) {
      next();
      return;
    }
    // The metrics label: the template, never the raw path (the table's paths have no parameters).
    res.locals[ROUTE_LOCAL] = route.path;
    return route.handler(req, res, next);
  };
}

/** The Express app (docs/engineering.md §1): routes, the 404/405 fallback and the one error middleware. */
export function createApp(options: CreateAppOptions): express.Express {
  const deps: AppDeps = { ...options, uploads: uploadOptionsByPath(options.limits) };
  const ops = {
    readiness: options.readiness ?? new Readiness('ready'),
    metrics: options.metrics ?? createMetrics(),
  };
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  app.use(requestLog(options.log, ops.metrics));
  const table = routes(deps, ops);
  app.use(dispatch(table));
  app.all('/{*splat}', fallback(table));
  app.use(errorMiddleware(options.log));
  return app;
}
