import type { RequestHandler } from 'express';
import { methodLabel, NO_METRICS, secondsSince, type RuntimeMetrics } from '../observe/metrics.js';
import { problemCodeOf } from '../observe/problem-code.js';
import { requestIdOf, withRequestId } from '../observe/request-id.js';
import type { Output } from '../output.js';

/** Longest request path written to an access log line (the rest is cut). */
export const MAX_LOGGED_PATH_CHARS = 256;

/** Which trigger server a request came to (log fields and metric labels). */
export interface AccessLogOptions {
  readonly deploymentId: string;
  readonly serverId: string;
  readonly output: Output;
  readonly metrics?: RuntimeMetrics | undefined;
}

/** The step a request was routed to (set by the trigger handler once matched). */
export const ROUTE_LOCAL = 'route';

/**
 * The first middleware of a trigger server: takes the request id (`X-Request-Id` when valid, else a new one),
 * echoes it, runs the rest of the request with it (outbound calls carry it), and writes one `request` line when
 * the response ends: method, path without the query, the step it ran, status, duration, and the problem `code`
 * of an error answer. Never bodies or other headers.
 */
export function accessLog(options: AccessLogOptions): RequestHandler {
  const metrics = options.metrics ?? NO_METRICS;
  return (req, res, next) => {
    const reqId = requestIdOf(req.headers['x-request-id']);
    const started = performance.now();
    res.setHeader('x-request-id', reqId);
    // The problem writer's `instance` and its 500 log line use the same id.
    res.locals['requestId'] = reqId;
    res.once('close', () => {
      const route = (res.locals[ROUTE_LOCAL] as string | undefined) ?? 'unmatched';
      const status = res.headersSent ? res.statusCode : 0;
      const code = status >= 400 ? problemCodeOf(res) : undefined;
      const seconds = secondsSince(started);
      const { deploymentId, serverId } = options;
      metrics.triggerRequest({
        deploymentId,
        serverId,
        route,
        method: methodLabel(req.method),
        status,
        seconds,
        code,
      });
      options.output.info('request', {
        reqId,
        deploymentId,
        server: serverId,
        method: methodLabel(req.method),
        path: (req.url ?? '').split('?')[0]!.slice(0, MAX_LOGGED_PATH_CHARS),
        stepId: route === 'unmatched' ? undefined : route,
        status,
        ms: Math.round(seconds * 100_000) / 100,
        ...(code === undefined ? {} : { code }),
        aborted: !res.writableFinished,
      });
    });
    withRequestId(reqId, next);
  };
}
