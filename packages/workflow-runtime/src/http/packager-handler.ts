/**
 * An HTTP trigger of a packager step (ADR 0136): the packager capability reads the request as the Express service
 * does, the step runs with the request held on the host side (`StepInput.packagerRequest`: never in the sandbox,
 * `getBody()` null), `context.packager()` runs it and its answer is the response. The held request is wiped when the
 * run ends, whatever the outcome.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DRAIN_MAX_BYTES,
  DRAIN_MAX_MS,
  internalProblem,
  PROBLEM_HEADERS,
  requestIdOf,
} from '@org/http-problem';
import { parseStrictJson } from '@org/strict-json';
import type { PackagerRequest, PackagerResponse, StepInput, StepResult } from '@org/workflow-engine';
import { AgentError, isCodedError } from '../errors.js';
import { noteProblemCode } from '../observe/problem-code.js';
import { writeError } from '../http-errors.js';
import { currentRequestId } from '../observe/request-id.js';
import type { PackagerAnswer, PackagerCapability, HeldPackagerRequest } from '../packager/capability.js';
import { writeStepResult } from './respond.js';
import type { PackagerRoute, TriggerRoute } from './routes.js';
import { requestLineOf } from './step-input.js';
import { failed, runTracked, type TriggerContext } from './trigger-handler.js';

/** The most bytes of a problem answer read for its `code`. */
const MAX_PROBLEM_BYTES = 64 * 1024;
const CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

type Fields = { deploymentId: string; stepId: string; operation: string; reqId: string };

/** The problem `code` of an error answer (application/problem+json with a `code` member), else null. */
export function answerCode(a: Pick<PackagerAnswer, 'status' | 'headers' | 'body'>): string | null {
  if (a.status < 400) return null;
  const type = a.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('application/problem+json') || a.body.byteLength > MAX_PROBLEM_BYTES)
    return null;
  try {
    const problem = parseStrictJson(a.body, { maxBytes: MAX_PROBLEM_BYTES });
    const code =
      typeof problem === 'object' && problem !== null ? (problem as { code?: unknown }).code : undefined;
    return typeof code === 'string' && CODE.test(code) ? code : null;
  } catch {
    return null;
  }
}

/** The generic 500 problem, built here when the capability itself fails to answer (never its error's text). */
function internalAnswer(requestId: string, failure: unknown): PackagerAnswer {
  const body = new TextEncoder().encode(JSON.stringify(internalProblem(requestId)));
  return { status: 500, headers: { ...PROBLEM_HEADERS }, body, failure };
}

/** `capability.answer`, or the generic 500 when that throws too. */
function answerFor(capability: PackagerCapability, err: unknown, requestId: string): PackagerAnswer {
  try {
    return capability.answer(err, requestId);
  } catch (inner) {
    return internalAnswer(requestId, inner);
  }
}

/** An internal failure is logged by its code only: nothing of its message, which may quote the request. */
function logFailure(ctx: TriggerContext, fields: Fields, a: PackagerAnswer): void {
  if (a.failure === undefined) return;
  ctx.output.error('packager request failed', {
    ...fields,
    code: isCodedError(a.failure) ? a.failure.code : 'INTERNAL',
  });
}

/** Runs the held request for the engine: never rejects; a thrown error becomes its answer. */
function engineRequest(
  ctx: TriggerContext,
  p: PackagerRoute,
  held: HeldPackagerRequest,
  fields: Fields,
  seen: { code: string | null },
): PackagerRequest {
  return {
    operation: p.operation,
    async run(): Promise<PackagerResponse> {
      let a: PackagerAnswer;
      try {
        a = await held.run(fields.reqId);
      } catch (err) {
        a = answerFor(p.capability, err, fields.reqId);
      }
      logFailure(ctx, fields, a);
      seen.code = answerCode(a);
      return { status: a.status, headers: a.headers, body: a.body, code: seen.code };
    },
  };
}

function wipe(ctx: TriggerContext, fields: Fields, held: HeldPackagerRequest): void {
  try {
    held.wipe();
  } catch (err) {
    ctx.output.error('packager request wipe failed', {
      ...fields,
      code: isCodedError(err) ? err.code : 'INTERNAL',
    });
  }
}

/**
 * Writes a result once the request is read to its end. A small unread body (declared length, no `Expect`) is read
 * and discarded first, so the connection survives and the client sees the answer, not a reset; a larger or
 * undeclared one gets `Connection: close` (as `@org/http-problem` answers a refusal). A result that cannot be
 * written (`AGENT_RESPONSE_INVALID`) is answered as a refusal.
 */
function whenRead(ctx: TriggerContext, req: IncomingMessage, res: ServerResponse, result: StepResult): void {
  const write = () => {
    if (res.headersSent || res.destroyed) return;
    try {
      writeStepResult(res, result);
    } catch (err) {
      writeError(req, res, err, ctx.output);
    }
  };
  if (req.complete || req.readableEnded) return write();
  const length = Number(req.headers['content-length']);
  const drainable =
    req.headers['transfer-encoding'] === undefined &&
    req.headers['expect'] === undefined &&
    Number.isSafeInteger(length) &&
    length <= DRAIN_MAX_BYTES &&
    !req.destroyed;
  if (!drainable) {
    res.setHeader('connection', 'close');
    return write();
  }
  let called = false;
  const finish = () => {
    if (called) return;
    called = true;
    clearTimeout(timer);
    if (!req.complete) res.setHeader('connection', 'close');
    write();
  };
  const timer = setTimeout(finish, DRAIN_MAX_MS);
  timer.unref();
  req.once('end', finish).once('close', finish).once('error', finish);
  req.resume();
}

/** Writes an answer as the response: its status, headers and bytes. */
function writeAnswer(
  ctx: TriggerContext,
  req: IncomingMessage,
  res: ServerResponse,
  a: PackagerAnswer,
): void {
  const code = answerCode(a);
  if (code !== null) noteProblemCode(res, code);
  const result = {
    status: a.status,
    body: a.body,
    headers: a.headers,
    properties: {},
    errored: false,
    errors: [],
  };
  whenRead(ctx, req, res, result);
}

/**
 * Answers a packager route's request that the `checkContinue` listener refused from its headers (S8): the
 * capability's answer for the refusal, as the Express service answers it, without `100 Continue` and without
 * reading the body (the listener has set `Connection: close`).
 */
export function refusePackager(
  ctx: TriggerContext,
  route: TriggerRoute,
  p: PackagerRoute,
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
): void {
  const fields = fieldsOf(route, p, res);
  refuseWith(ctx, p, fields, req, res, err);
}

/** The capability's answer for a refusal, logged when internal, written as the response. */
function refuseWith(
  ctx: TriggerContext,
  p: PackagerRoute,
  fields: Fields,
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
): void {
  const a = answerFor(p.capability, err, fields.reqId);
  logFailure(ctx, fields, a);
  writeAnswer(ctx, req, res, a);
}

/**
 * The log fields of a packager request, with the access log's request id (the X-Request-Id answered, the problem's
 * instance), so the answer's bytes match it.
 */
function fieldsOf(route: TriggerRoute, p: PackagerRoute, res: ServerResponse): Fields {
  return {
    deploymentId: route.deploymentId,
    stepId: route.stepId,
    operation: p.operation,
    reqId: currentRequestId() ?? requestIdOf(res),
  };
}

/** Serves one request of a packager route. */
export async function servePackager(
  ctx: TriggerContext,
  route: TriggerRoute,
  p: PackagerRoute,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const fields = fieldsOf(route, p, res);
  let held: HeldPackagerRequest;
  try {
    held = await p.capability.read(p.operation, req, p.dirs, route.multipartLimit);
  } catch (err) {
    return refuseWith(ctx, p, fields, req, res, err);
  }
  const seen = { code: null as string | null };
  let result: StepResult | undefined;
  try {
    // The runtime may have begun to stop while the request was read.
    if (ctx.tracker.closed) throw ctx.tracker.refuse();
    const input: StepInput = {
      body: undefined,
      stream: undefined,
      ...requestLineOf(req),
      packagerRequest: engineRequest(ctx, p, held, fields, seen),
    };
    result = await runTracked(ctx, route, input);
  } finally {
    wipe(ctx, fields, held);
  }
  if (result === undefined || failed(ctx, route, result))
    throw new AgentError('AGENT_STEP_FAILED', 'the step failed');
  if (seen.code !== null && result.status !== undefined && result.status >= 400)
    noteProblemCode(res, seen.code);
  whenRead(ctx, req, res, result);
}
