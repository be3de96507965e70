import type { EngineHost, OutboundRequest, OutboundResponse, StepInput } from '../src/index.js';

type LogEntry = Parameters<EngineHost['log']>[0];
type Metric = Parameters<EngineHost['metric']>[0];

/** A test double of the app's side of the engine boundary; records every call. */
export interface FakeHost extends EngineHost {
  calls: OutboundRequest[];
  logs: LogEntry[];
  metrics: Metric[];
  secrets: string[];
  restrictedCalls: string[];
}

export interface FakeHostOptions {
  respond?: (req: OutboundRequest) => OutboundResponse | Promise<OutboundResponse>;
  restricted?: Record<string, string | Error>;
  now?: number;
  /** A controllable clock (wins over `now`): TTL tests move time instead of sleeping. */
  clock?: () => number;
}

const enc = new TextEncoder();

/** A response with a text body. */
export function textResponse(
  status: number,
  body: string,
  headers: Record<string, string[]> = {},
): OutboundResponse {
  return { status, headers, body: enc.encode(body) };
}

/** A coded error as the app throws it. */
export function codedError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

export function fakeHost(options: FakeHostOptions = {}): FakeHost {
  const host: FakeHost = {
    calls: [],
    logs: [],
    metrics: [],
    secrets: [],
    restrictedCalls: [],
    async callOutbound(req) {
      host.calls.push(req);
      return options.respond ? options.respond(req) : textResponse(200, 'ok');
    },
    getRestrictedData(hostId) {
      host.restrictedCalls.push(hostId);
      const v = options.restricted?.[hostId];
      if (v === undefined) {
        return Promise.reject(
          codedError('POLICY_HOST_NOT_ALLOWED', `host ${hostId} is not an authentication host`),
        );
      }
      return v instanceof Error ? Promise.reject(v) : Promise.resolve(v);
    },
    registerSecret(value) {
      host.secrets.push(value);
    },
    log(entry) {
      host.logs.push(entry);
    },
    metric(m) {
      host.metrics.push(m);
    },
    now: () => options.clock?.() ?? options.now ?? 1_700_000_000_000,
  };
  return host;
}

/** A step input with a text body. */
export function input(body?: string, extra: Partial<StepInput> = {}): StepInput {
  return { body, stream: undefined, headers: {}, properties: {}, ...extra };
}

/** A compiled workflow file with one workflow holding `steps`. */
export function workflow(steps: unknown[], extra: Record<string, unknown> = {}): unknown {
  return { workflows: [{ name: 'test', steps }], ...extra };
}

/** A step with just a resultsProcessor script. */
export function scriptStep(stepId: string, script: string, extra: Record<string, unknown> = {}): unknown {
  return { stepId, resultsProcessor: { script }, ...extra };
}
