import { sendBody, type TableHandler } from './plain-http.js';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Buckets of request durations, in seconds: 5 ms to 30 s (uploads and packaging are slower than lookups). */
export const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** One finished request, as the request log reports it. Every label value is bounded (ADR 0093). */
export interface RequestObservation {
  /** The route template (`/key-gen`), or `unmatched` for a path no route has: never the raw path. */
  readonly route: string;
  readonly method: string;
  /** 0 when the connection closed before an answer. */
  readonly status: number;
  readonly seconds: number;
  /** The problem `code` of an error answer (a fixed list). */
  readonly code?: string | undefined;
}

/** The service's Prometheus metrics (README "Metrics"). */
export interface Metrics {
  readonly registry: Registry;
  observe(o: RequestObservation): void;
}

/** A Prometheus registry with the request metrics; `defaults` adds prom-client's process metrics. */
export function createMetrics(options: { readonly defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaults === true) collectDefaultMetrics({ register: registry, prefix: 'packager_' });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'packager_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'packager_http_request_duration_seconds',
    help: 'Time from the request to the end of the answer, by route template, method and status.',
    labelNames,
    buckets: DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'packager_errors_total',
    help: 'Problem answers, by problem code.',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  return {
    registry,
    observe(o) {
      const method = METHODS.has(o.method) ? o.method : 'OTHER';
      const labels = { method, route: o.route, status: String(o.status) };
      requests.inc(labels);
      duration.observe(labels, o.seconds);
      if (o.code !== undefined) errors.inc({ code: o.code });
    },
  };
}

/** GET /metrics: the Prometheus text exposition format. */
export function metricsRoute(metrics: Metrics): TableHandler {
  return async (_req, res) => {
    const text = await metrics.registry.metrics();
    res.setHeader('Cache-Control', 'no-store');
    sendBody(res, metrics.registry.contentType, text);
  };
}
