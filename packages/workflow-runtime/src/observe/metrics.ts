/**
 * What the runtime reports for metrics, as plain events: the library depends on no metrics client. The agent
 * passes an implementation over prom-client; the default drops everything. Every label value is bounded by the
 * bootstrap (deployment, server, step, host ids) or by a fixed list (trigger kinds, outcomes, methods): never
 * a raw path, a request value or a secret.
 */
export interface RuntimeMetrics {
  /** One HTTP trigger request ended (answered, or its connection closed). */
  triggerRequest(e: TriggerRequestEvent): void;
  /** One step run ended, whatever started it. */
  stepRun(e: StepRunEvent): void;
  /** One outbound call ended: allowed and answered, refused by the host policy, timed out or failed. */
  outboundCall(e: OutboundCallEvent): void;
}

/** The kinds of trigger a step run is counted under. */
export type TriggerKind = 'http' | 'timer' | 'runOnce' | 'event' | 'direct';

export interface TriggerRequestEvent {
  readonly deploymentId: string;
  readonly serverId: string;
  /** The matched step id; `unmatched` for a 404/405 or a request refused before matching. */
  readonly route: string;
  /** Upper case, one of {@link KNOWN_METHODS}, else `OTHER`. */
  readonly method: string;
  /** 0 when the connection closed before an answer. */
  readonly status: number;
  readonly seconds: number;
  /** The problem `code` of an error answer. */
  readonly code?: string | undefined;
}

export interface StepRunEvent {
  readonly deploymentId: string;
  readonly stepId: string;
  readonly trigger: TriggerKind;
  /** `error`: the run resolved with errors or the engine rejected it. */
  readonly outcome: 'ok' | 'error';
  readonly seconds: number;
}

/** How an outbound call ended. */
export type OutboundOutcome = 'ok' | 'refused' | 'timeout' | 'error';

export interface OutboundCallEvent {
  readonly deploymentId: string;
  /** The `allowedHosts[].id` the step called (a bootstrap id, never the URL). */
  readonly hostId: string;
  readonly outcome: OutboundOutcome;
  readonly seconds: number;
}

/** Metrics that go nowhere (the default). */
export const NO_METRICS: RuntimeMetrics = Object.freeze({
  triggerRequest() {},
  stepRun() {},
  outboundCall() {},
});

/** Methods kept as label values; any other method is counted as `OTHER`. */
export const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
]);

/** A request method as a bounded label value. */
export function methodLabel(method: string | undefined): string {
  const m = (method ?? '').toUpperCase();
  return KNOWN_METHODS.has(m) ? m : 'OTHER';
}

/** Seconds since `started` (a `performance.now()` value). */
export function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}
