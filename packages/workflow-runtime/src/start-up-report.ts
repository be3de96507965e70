import { describeUnsupported, planSchedule, type WorkflowEngine } from '@org/workflow-engine';
import type { DeploymentRecord } from '@org/workflow-compiler';

/** One unsupported feature a deployment uses: one warning line at start-up, before anything runs. */
export interface UnsupportedUse {
  readonly kind: 'trigger' | 'step-type' | 'context-call' | 'bootstrap-field' | 'timer';
  /** Trigger kind, step type, call name or record field path. */
  readonly name: string;
  readonly stepId?: string | undefined;
  /** What happens instead. */
  readonly effect: string;
}

/** Trigger kinds this agent runs (`comment` is not a trigger). */
export const SUPPORTED_TRIGGERS: ReadonlySet<string> = new Set([
  'http',
  'runOnce',
  'runOnceNoTrace',
  'timer',
  'fileWatcher',
  'tcp',
  'deploymentAccess',
  'comment',
]);

/**
 * Record fields the bootstrap schema accepts and this agent ignores (docs/interfaces.md §3). Remove an entry in the
 * change that implements the field. Paths with `[]` are checked on every array element. A field set to `false`,
 * `"false"` or null (and `frequency: 0`, "load once") asks for nothing and is not reported.
 * `errorHandling.enableLocalLogging` is not listed: the agent always logs to stdout.
 */
export const IGNORED_RECORD_FIELDS: readonly string[] = [
  'agentPrivateKey',
  'licensing',
  'remoteConfigurationAuth',
  'remoteConfigurationHeaders',
  'frequency',
  'remoteConfigurationTimeout',
  'errorHandling.metrics',
  'errorHandling.logs',
  'errorHandling.redactionPatterns',
  'agentControl.workflowCanShutdownAgent',
  'reloadTimeout',
  'workflow.errorHandling.metrics',
  'workflow.errorHandling.logs',
  'workflow.errorHandling.redactionPatterns',
  'workflow.metricOutput',
  'workflow.outputs',
  'workflow.shutdownTimeout',
];

/** Switches of a record's `referenceBehaviour` the runtime implements (compiler SPEC.md §8.3). */
export const REFERENCE_SWITCHES = ['httpRequestEnvelope'] as const;

/** The `referenceBehaviour` switches a record turns on (`true` or `"true"`), in {@link REFERENCE_SWITCHES} order. */
export function referenceSwitches(record: DeploymentRecord): string[] {
  const on = record.referenceBehaviour;
  if (typeof on !== 'object' || on === null) return [];
  return REFERENCE_SWITCHES.filter((k) => {
    const v = (on as Record<string, unknown>)[k];
    return v === true || v === 'true';
  });
}

/** Where the agent deliberately differs from the reference agent (docs/interfaces.md DECIDED items; README). */
export const DELIBERATE_DIFFERENCES: readonly { readonly id: string; readonly detail: string }[] = [
  {
    id: 'http-request-body',
    detail:
      'docs/interfaces.md §6.1: an HTTP-triggered step gets the request body itself from getBody(), not a {uri, method, path, query, body} envelope; the request line is in the properties http.method, http.path, http.query, http.uri; a deployment switches to the envelope with referenceBehaviour.httpRequestEnvelope',
  },
  {
    id: 'multipart-body-part',
    detail:
      'docs/interfaces.md §6.2: getBody() is exactly the multipart body part (or the plain body); raw bytes and octet-stream uploads reach only getStream()',
  },
  {
    id: 'authentication-processor-order',
    detail:
      'the authenticationProcessor runs after urlGenerator and payloadGenerator (docs/interfaces.md §4.5 lists it first), so its headers stay out of every other processor',
  },
  {
    id: 'script-time-limit',
    detail:
      'a processor run has a time limit, 5000 ms by default (then ENGINE_TIMEOUT); the reference names no limit and its public security test computes for 5000 ms in one processor and goes on; a deployment sets its own limit, up to 600000 ms, with scriptTimeoutMs, and AGENT_SCRIPT_TIME_MS changes the default',
  },
];

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when a field path (`a.b`, `a[].b`) holds a value that asks for something (see IGNORED_RECORD_FIELDS). */
function present(value: unknown, path: string[]): boolean {
  if (path.length === 0) return value !== undefined && value !== null && value !== false && value !== 'false';
  const [head, ...rest] = path as [string, ...string[]];
  if (head.endsWith('[]')) {
    const list = isObject(value) ? value[head.slice(0, -2)] : undefined;
    return Array.isArray(list) && list.some((item) => present(item, rest));
  }
  return isObject(value) && present(value[head], rest);
}

function ignoredFields(record: DeploymentRecord): UnsupportedUse[] {
  const asks = (path: string) =>
    present(record, path.split('.')) && !(path === 'frequency' && record['frequency'] === 0);
  return IGNORED_RECORD_FIELDS.filter(asks).map((name) => ({
    kind: 'bootstrap-field',
    name,
    effect: 'accepted and ignored by this agent',
  }));
}

function unsupportedTriggers(engine: WorkflowEngine): UnsupportedUse[] {
  const out: UnsupportedUse[] = [];
  for (const step of engine.steps) {
    if (!isObject(step.trigger)) continue;
    for (const kind of Object.keys(step.trigger)) {
      if (SUPPORTED_TRIGGERS.has(kind)) continue;
      out.push({
        kind: 'trigger',
        name: kind,
        stepId: step.stepId,
        effect: 'not run by this agent; the step runs only through sendToStep',
      });
    }
  }
  return out;
}

/**
 * Every unsupported feature one deployment uses: trigger kinds, step types and context calls (from the
 * engine's lists), unusable timers, and ignored record fields. Pure; the app logs one line per entry.
 */
export function unsupportedUses(
  record: DeploymentRecord,
  workflow: unknown,
  engine: WorkflowEngine,
): UnsupportedUse[] {
  const fromEngine = describeUnsupported(workflow).map((f): UnsupportedUse => ({
    kind: f.kind,
    name: f.name,
    stepId: f.stepId,
    effect:
      f.kind === 'step-type'
        ? 'runs of this step fail with ENGINE_UNSUPPORTED'
        : 'the call throws ENGINE_UNSUPPORTED when the script reaches it',
  }));
  const timers = planSchedule(engine.steps).problems.map((p): UnsupportedUse => ({
    kind: 'timer',
    name: p.detail,
    stepId: p.stepId,
    effect: 'the timer is not run',
  }));
  return [...unsupportedTriggers(engine), ...fromEngine, ...timers, ...ignoredFields(record)];
}
