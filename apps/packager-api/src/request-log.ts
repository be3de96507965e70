import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { TableResponse } from './plain-http.js';
import { requestIdFrom } from '@org/http-problem';

import { PROBLEM_CODE_LOCAL } from '@org/http-problem';

/** `res.locals` key where the route dispatcher leaves the route template a request matched. */
export const ROUTE_LOCAL = 'routeTemplate';

/**
 * The route template a request matched (`/key-gen`; the table's paths have no parameters, so it is also the path),
 * or undefined: the metrics label is then `unmatched` (bounded, never the raw path), and the log line's path is
 * Express's `req.path` (such a request went through Express; a table route's plain request has no getter for it,
 * ADR 0120).
 */
function routeOf(res: TableResponse): string | undefined {
  const path: unknown = res.locals[ROUTE_LOCAL];
  return typeof path === 'string' ? path : undefined;
}

/** What {@link requestLog} does for one request before handing it on (see there). */
export type RequestLogStart = (req: IncomingMessage, res: TableResponse) => void;

/**
 * The start of {@link requestLog} without the `next()` call, for a middleware that logs and dispatches in one
 * Express layer (the app's, ADR 0112).
 */
export function requestLogStart(log: Logger, metrics?: Metrics): RequestLogStart {
  return (req, res) => {
    const reqId = requestIdFrom(req.headers['x-request-id']);
    const start = process.hrtime.bigint();
    res.locals['requestId'] = reqId;
    res.setHeader('X-Request-Id', reqId);
    // API answers are never to be sniffed into something a browser would render.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const status = res.headersSent ? res.statusCode : 0;
      const code = status >= 400 ? (res.locals[PROBLEM_CODE_LOCAL] as string | undefined) : undefined;
      metrics?.observe({
        route: routeOf(res) ?? 'unmatched',
        method: req.method ?? '',
        status,
        seconds: ms / 1000,
        code,
      });
      // One object literal in the line's field order; an undefined `code` is left out of the JSON line.
      log.info('request', {
        reqId,
        method: req.method,
        path: routeOf(res) ?? (req as IncomingMessage & { path?: string }).path,
        status,
        ms: Math.round(ms * 100) / 100,
        contentType: req.headers['content-type'],
        contentLength: req.headers['content-length'],
        code,
        aborted: !res.writableFinished,
      });
    };
    // A response emits `close` once, after `finish`, and also when the connection goes first: one listener for
    // both (`on`, not `once`: no wrapper to allocate and remove for an event that comes once).
    res.on('close', done);
  };
}

/**
 * Gives every request an id (`X-Request-Id`: the inbound one when valid, else a new UUID; also the problem
 * `instance`) and logs one line when it ends: method, path (without the query: key-gen's is harmless, but no
 * query is ever logged), status, duration, the request's content type and length, and the problem `code` of an
 * error answer. Never bodies, other headers or key material. The same end feeds the request metrics.
 */
export function requestLog(log: Logger, metrics?: Metrics): RequestHandler {
  const begin = requestLogStart(log, metrics);
  return (req, res, next) => {
    begin(req, res);
    next();
  };
}
