import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { acceptedMediaTypes, readUpload, type ReadUploadOptions } from '@org/multipart-limits';
import { isStrictJsonError, parseStrictJson, type StrictJsonErrorCode } from '@org/strict-json';
import type { RequestHandler } from 'express';
import type { Limits } from '../limits.js';
import type { AssetArchive } from '../assets/archive.js';
import { serveAsset } from '../assets/serve.js';
import type { StepInput, StepResult } from '@org/workflow-engine';
import { AgentError, isCodedError, type AgentErrorCode } from '../errors.js';
import { problemOf } from '../http-errors.js';
import type { Output } from '../output.js';
import { ROUTE_LOCAL } from './access-log.js';
import { writeStepResult } from './respond.js';
import { matchRoute, type TriggerRoute } from './routes.js';
import type { HttpRunCounters } from './http-runs.js';
import type { RunTracker } from './run-tracker.js';
import { servePackager } from './packager-handler.js';
import { splitTarget, stepInputOf } from './step-input.js';

/** What the trigger handler of one server needs. */
export interface TriggerContext {
  readonly routes: readonly TriggerRoute[];
  readonly limits: Limits;
  readonly output: Output;
  readonly tracker: RunTracker;
  /** Counts runs per step (optional for tests that build a server alone). */
  readonly runs?: HttpRunCounters | undefined;
  /** The server's packaged asset zip (`serveFromPackagedAsset`), served to its `httpFile` steps. */
  readonly assets?: AssetArchive | undefined;
}

/** The upload options of a route: multipart only with the step's `multiPartUploadByteLimit`. */
export function uploadOptionsOf(route: TriggerRoute, limits: Limits): ReadUploadOptions {
  return {
    multipartByteLimit: route.multipartLimit,
    bodyFieldByteLimit: limits.bodyFieldBytes,
    rawBodyByteLimit: limits.rawBodyBytes,
  };
}

/** The route for a request, or the 404/405 error (S11). */
export function routeFor(ctx: TriggerContext, req: IncomingMessage): TriggerRoute {
  const match = matchRoute(ctx.routes, req.method ?? 'GET', splitTarget(req.url).path);
  if (match.route !== undefined) return match.route;
  if (match.allow !== undefined) {
    throw Object.assign(
      new AgentError('AGENT_METHOD_NOT_ALLOWED', 'the trigger on this path takes another method'),
      {
        headers: { allow: match.allow.join(', ') },
      },
    );
  }
  throw new AgentError('AGENT_ROUTE_NOT_FOUND', 'no trigger on this server matches the path');
}

/** The agent's code for each strict-JSON failure of a trigger body (ADR 0096: never a package's format code). */
const BODY_CODE_OF = {
  JSON_TOO_LARGE: 'AGENT_BODY_TOO_LARGE',
  JSON_BAD_UTF8: 'AGENT_BODY_NOT_JSON',
  JSON_INVALID: 'AGENT_BODY_NOT_JSON',
  JSON_DUPLICATE_KEY: 'AGENT_BODY_DUPLICATE_KEY',
  JSON_LONE_SURROGATE: 'AGENT_BODY_NOT_JSON',
  JSON_TOO_DEEP: 'AGENT_BODY_TOO_DEEP',
  JSON_BAD_NUMBER: 'AGENT_BODY_NOT_JSON',
} as const satisfies Record<StrictJsonErrorCode, AgentErrorCode>;

/**
 * S2–S4: a JSON body must be strict JSON before a run starts; the step still gets the exact text.
 * @throws AgentError `AGENT_BODY_TOO_LARGE`, `AGENT_BODY_NOT_JSON`, `AGENT_BODY_DUPLICATE_KEY`, `AGENT_BODY_TOO_DEEP`.
 */
export function checkJsonBody(body: string | undefined, limits: Pick<Limits, 'rawBodyBytes'>): void {
  if (body === undefined) return;
  try {
    parseStrictJson(body, { maxBytes: limits.rawBodyBytes });
  } catch (err) {
    if (!isStrictJsonError(err)) throw err;
    throw new AgentError(BODY_CODE_OF[err.code], `the request body: ${err.message}`, { cause: err });
  }
}

async function run(
  ctx: TriggerContext,
  route: TriggerRoute,
  req: IncomingMessage,
): Promise<{ result: StepResult | undefined; stream: Readable | undefined; uploadError: unknown }> {
  const upload = await readUpload(req, uploadOptionsOf(route, ctx.limits));
  if (upload.kind === 'json') checkJsonBody(upload.body, ctx.limits);
  // The runtime may have begun to stop while the body was read: its engines are (about to be) disposed.
  if (ctx.tracker.closed) throw ctx.tracker.refuse();
  const input = stepInputOf(req, upload, route.envelope === true);
  const stream = input.stream as Readable | undefined;
  let uploadError: unknown;
  // The 'error' event may come a tick after the step saw the failure; `errored` is set at once.
  stream?.on('error', (err) => (uploadError = err));
  const result = await runTracked(ctx, route, input);
  return { result, stream, uploadError: stream?.errored ?? uploadError };
}

/**
 * Runs the route's step on `input`, tracked (the runtime drains it), counted, with the `step run` debug line;
 * undefined when the run failed (logged by code).
 */
export async function runTracked(
  ctx: TriggerContext,
  route: TriggerRoute,
  input: StepInput,
): Promise<StepResult | undefined> {
  const started = performance.now();
  const done = ctx.runs?.start(route.deploymentId, route.stepId);
  const result = await ctx.tracker
    .track(() => route.engine.runStep(route.step, input))
    .catch((err: unknown) => {
      ctx.output.error('step run failed', {
        deploymentId: route.deploymentId,
        stepId: route.stepId,
        code: isCodedError(err) ? err.code : 'INTERNAL',
      });
      return undefined;
    });
  const outcome = result === undefined ? 'failed' : result.errored ? 'errored' : 'ok';
  done?.(outcome !== 'ok');
  // The same per-run line the scheduler's runs get (runtime/timers.ts), at debug level.
  ctx.output.debug('step run', {
    deploymentId: route.deploymentId,
    stepId: route.stepId,
    trigger: 'http',
    durationMs: Math.round(performance.now() - started),
    outcome,
  });
  return result;
}

/** True when the run's result must not be answered as it is (logged: the step's redacted errors). */
export function failed(ctx: TriggerContext, route: TriggerRoute, result: StepResult | undefined): boolean {
  if (result === undefined) return true;
  // An errored run never answers success: a status from an earlier outbound call (say 200) does not stand
  // when a later processor threw. An error status the step chose (4xx/5xx) is kept.
  if (!result.errored || (result.status !== undefined && result.status >= 400)) return false;
  // The step's own messages are already redacted by the engine; the output redacts again.
  ctx.output.warn('step errored', {
    deploymentId: route.deploymentId,
    stepId: route.stepId,
    errors: result.errors.join('; '),
  });
  return true;
}

/** The Express handler of one trigger server: match, read the upload, run the step, answer. */
export function triggerHandler(ctx: TriggerContext): RequestHandler {
  return async (req, res) => {
    // A stopping runtime starts no run and serves no asset: 503, never a 500 from a disposed engine.
    if (ctx.tracker.closed) throw ctx.tracker.refuse();
    const route = routeFor(ctx, req);
    res.locals[ROUTE_LOCAL] = route.stepId;
    if (route.file !== undefined) return serveAsset(ctx, route, req, res as ServerResponse);
    if (route.packager !== undefined)
      return servePackager(ctx, route, route.packager, req, res as ServerResponse);
    res.locals['acceptPost'] = acceptedMediaTypes(uploadOptionsOf(route, ctx.limits));
    const { result, stream, uploadError } = await run(ctx, route, req);
    // An upload that failed while the step streamed it is answered with the upload's own code (413, 400).
    if (problemOf(uploadError) !== undefined) throw uploadError;
    if (failed(ctx, route, result)) throw new AgentError('AGENT_STEP_FAILED', 'the step failed');
    const unread = stream !== undefined && !stream.readableEnded;
    if (unread) res.setHeader('connection', 'close');
    writeStepResult(res as ServerResponse, result!);
    if (unread) res.once('finish', () => stream.destroy());
  };
}
