import { AgentError } from '../errors.js';
import type { StepInfo, StepRef, WorkflowEngine } from '@org/workflow-engine';
import { assetPrefixOf } from '../assets/names.js';
import type { PackagerBinding } from '../packager/setup.js';

/** One `http` trigger, ready to match (ADR 0045). */
export interface TriggerRoute {
  readonly deploymentId: string;
  readonly stepId: string;
  /** The step's workflow (ADR 0060: two workflows may share a stepId; the route runs its own step). */
  readonly step: StepRef;
  /** Upper case; undefined accepts every method. */
  readonly method: string | undefined;
  readonly pattern: RegExp;
  readonly multipartLimit: number | undefined;
  readonly engine: WorkflowEngine;
  /** Set for an `httpFile` step: served from the server's packaged asset zip, not run (ADR 0077). */
  readonly file?: { readonly prefix: string } | undefined;
  /** The deployment's `referenceBehaviour.httpRequestEnvelope`: the body is the request envelope (step-input.ts). */
  readonly envelope?: boolean | undefined;
  /**
   * Set for a step of a deployment granted the packager capability that declares `data.packagerOperation`: the
   * capability reads the request and the run holds it (packager-handler.ts, ADR 0136).
   */
  readonly packager?: PackagerRoute | undefined;
}

/** The packager operation a route serves, with the capability and the deployment's directories. */
export interface PackagerRoute extends PackagerBinding {
  readonly operation: string;
}

/** Longest request path matched at all; longer paths are 404 without running a pattern. */
export const MAX_MATCH_PATH_CHARS = 2048;

interface HttpTrigger {
  server: string;
  path: string;
  method?: string;
  multiPartUploadByteLimit?: number;
}

function httpTriggerOf(trigger: unknown): HttpTrigger | undefined {
  if (typeof trigger !== 'object' || trigger === null) return undefined;
  const http = (trigger as { http?: unknown }).http;
  return typeof http === 'object' && http !== null ? (http as HttpTrigger) : undefined;
}

function compilePattern(deploymentId: string, stepId: string, path: string): RegExp {
  try {
    // ADR 0045: the whole path (without the query) must match.
    return new RegExp(`^(?:${path})$`);
  } catch {
    throw new AgentError(
      'AGENT_TRIGGER_INVALID',
      `deployment "${deploymentId}", step "${stepId}": trigger.http.path is not a valid regular expression`,
    );
  }
}

/**
 * The asset route of an `httpFile` step: its server must serve a packaged asset, and a declared method must be
 * GET or HEAD.
 */
function fileRouteOf(
  deploymentId: string,
  step: StepInfo,
  http: HttpTrigger,
  assetServers: ReadonlySet<string>,
) {
  if (step.type !== 'httpFile') return undefined;
  const where = `deployment "${deploymentId}", step "${step.stepId}"`;
  if (!assetServers.has(http.server))
    throw new AgentError(
      'AGENT_TRIGGER_INVALID',
      `${where}: httpFile needs a server with serveFromPackagedAsset`,
    );
  const method = http.method?.toUpperCase();
  if (method !== undefined && method !== 'GET' && method !== 'HEAD')
    throw new AgentError('AGENT_TRIGGER_INVALID', `${where}: an httpFile trigger takes GET or HEAD only`);
  return { prefix: assetPrefixOf(http.path) };
}

/** The operation of a step that declares one, on a deployment with the capability (setup.ts checked the name). */
function packagerRouteOf(step: StepInfo, binding: PackagerBinding | undefined): PackagerRoute | undefined {
  const operation = step.packagerOperation;
  if (binding === undefined || typeof operation !== 'string' || step.type === 'httpFile') return undefined;
  return { ...binding, operation };
}

function stepName(step: StepInfo): string {
  return `step "${step.stepId}" of workflow "${step.workflow}" (#${step.workflowIndex})`;
}

/**
 * The `http` triggers of one deployment's steps, grouped by server id. Two triggers with the same server, method
 * (case-insensitive; none = any) and path text would leave the second unreachable: `AGENT_TRIGGER_DUPLICATE`
 * naming both steps (ADR 0060). `httpFile` steps need a server in `assetServers` (ADR 0077).
 */
export function httpRoutes(
  deploymentId: string,
  steps: readonly StepInfo[],
  engine: WorkflowEngine,
  serverIds: ReadonlySet<string>,
  assetServers: ReadonlySet<string> = new Set(),
  envelope = false,
  packager?: PackagerBinding,
): Map<string, TriggerRoute[]> {
  const byServer = new Map<string, TriggerRoute[]>();
  const seen = new Map<string, StepInfo>();
  for (const step of steps) {
    const http = httpTriggerOf(step.trigger);
    if (http === undefined) continue;
    const key = `${http.server}\u0000${http.method?.toUpperCase() ?? '*'}\u0000${http.path}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new AgentError(
        'AGENT_TRIGGER_DUPLICATE',
        `deployment "${deploymentId}": ${stepName(first)} and ${stepName(step)} have the same http trigger (server "${http.server}", method ${http.method?.toUpperCase() ?? 'any'}, path)`,
      );
    }
    seen.set(key, step);
    if (!serverIds.has(http.server)) {
      throw new AgentError(
        'AGENT_TRIGGER_INVALID',
        `deployment "${deploymentId}", step "${step.stepId}": server "${http.server}" is not in allowHttpServerAccess`,
      );
    }
    const list = byServer.get(http.server) ?? [];
    list.push({
      deploymentId,
      stepId: step.stepId,
      step: { stepId: step.stepId, workflowIndex: step.workflowIndex },
      method: http.method?.toUpperCase(),
      pattern: compilePattern(deploymentId, step.stepId, http.path),
      multipartLimit: http.multiPartUploadByteLimit,
      engine,
      file: fileRouteOf(deploymentId, step, http, assetServers),
      envelope,
      packager: packagerRouteOf(step, packager),
    });
    byServer.set(http.server, list);
  }
  return byServer;
}

/** The outcome of matching a request line against a server's routes. */
export type RouteMatch =
  | { readonly route: TriggerRoute }
  | { readonly route: undefined; readonly allow: readonly string[] | undefined };

/**
 * The first route (declaration order) whose pattern matches the path and whose method matches
 * case-insensitively. No pattern matches → `allow` undefined (404); patterns match but no method does →
 * `allow` lists the methods that would (405, S11), unless one of them is a packager route: the request then goes to
 * the first such route, whose packager answers another method (HEAD for GET included) as its Express service does.
 */
export function matchRoute(routes: readonly TriggerRoute[], method: string, path: string): RouteMatch {
  if (path.length > MAX_MATCH_PATH_CHARS) return { route: undefined, allow: undefined };
  const m = method.toUpperCase();
  const allow = new Set<string>();
  let packager: TriggerRoute | undefined;
  for (const r of routes) {
    if (!r.pattern.test(path)) continue;
    // An httpFile route declared for GET answers HEAD too (RFC 9110 §9.3.2).
    const head = m === 'HEAD' && r.file !== undefined && r.method === 'GET';
    if (r.method === undefined || r.method === m || head) return { route: r };
    allow.add(r.method);
    if (r.file !== undefined && r.method === 'GET') allow.add('HEAD');
    packager ??= r.packager === undefined ? undefined : r;
  }
  if (packager !== undefined) return { route: packager };
  return { route: undefined, allow: allow.size > 0 ? [...allow] : undefined };
}
