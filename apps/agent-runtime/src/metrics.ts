import type { RuntimeMetrics } from '@org/workflow-runtime';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Buckets of request, run and call durations, in seconds: 5 ms to 60 s. */
export const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The agent's Prometheus registry and the runtime's metric events written into it (ADR 0093). */
export interface AgentMetrics {
  readonly registry: Registry;
  /** Passed to `createRuntime` as `metrics`. */
  readonly runtime: RuntimeMetrics;
}

function histogram<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]) {
  return new Histogram<L>({
    name,
    help,
    labelNames,
    buckets: DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
}

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]) {
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

/**
 * A fresh registry (never prom-client's global one) with the agent's metrics; `defaults` adds prom-client's
 * process metrics (`agent_process_*`, `agent_nodejs_*`). Label values are bootstrap ids or fixed lists.
 */
export function createAgentMetrics(options: { readonly defaults?: boolean } = {}): AgentMetrics {
  const registry = new Registry();
  if (options.defaults === true) collectDefaultMetrics({ register: registry, prefix: 'agent_' });
  const req = ['deployment', 'server', 'route', 'method', 'status'];
  const requests = counter(
    registry,
    'agent_http_requests_total',
    'Trigger requests answered, by route (step id).',
    req,
  );
  const requestSeconds = histogram(
    registry,
    'agent_http_request_duration_seconds',
    'Trigger request durations.',
    req,
  );
  const errors = counter(registry, 'agent_errors_total', 'Problem answers of trigger servers, by code.', [
    'code',
  ]);
  const run = ['deployment', 'step', 'trigger'];
  const runs = counter(registry, 'agent_step_runs_total', 'Step runs ended, by trigger kind and outcome.', [
    ...run,
    'outcome',
  ]);
  const runSeconds = histogram(registry, 'agent_step_run_duration_seconds', 'Step run durations.', run);
  const call = ['deployment', 'host', 'outcome'];
  const calls = counter(
    registry,
    'agent_outbound_calls_total',
    'Outbound calls, by host id and outcome.',
    call,
  );
  const callSeconds = histogram(
    registry,
    'agent_outbound_call_duration_seconds',
    'Outbound call durations.',
    call,
  );
  const runtime: RuntimeMetrics = {
    triggerRequest(e) {
      const labels = {
        deployment: e.deploymentId,
        server: e.serverId,
        route: e.route,
        method: e.method,
        status: String(e.status),
      };
      requests.inc(labels);
      requestSeconds.observe(labels, e.seconds);
      if (e.code !== undefined) errors.inc({ code: e.code });
    },
    stepRun(e) {
      const labels = { deployment: e.deploymentId, step: e.stepId, trigger: e.trigger };
      runs.inc({ ...labels, outcome: e.outcome });
      runSeconds.observe(labels, e.seconds);
    },
    outboundCall(e) {
      const labels = { deployment: e.deploymentId, host: e.hostId, outcome: e.outcome };
      calls.inc(labels);
      callSeconds.observe(labels, e.seconds);
    },
  };
  return { registry, runtime };
}
