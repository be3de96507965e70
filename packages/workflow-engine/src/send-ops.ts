import { authStepInput, checkSendTarget } from './auth-flow.js';
import { EngineError } from './errors.js';
import { stringArg } from './host-args.js';
import type { RunContext } from './run-context.js';
import type { StepInput, StepResult } from './types.js';

/** Longest `debug` line about an errored `sendToStep` callee (its errors are cut there). */
const MAX_NESTED_ERROR_CHARS = 4_096;

/** Deepest chain of `sendToStep` / `sendToStepAndForget` calls from one trigger. */
export const MAX_SEND_DEPTH = 8;

type Args = unknown[];

/**
 * `args`: `[stepId, body, headers, properties]`; the sandbox sends its run properties (4th) only from an
 * authentication context, where they pass into the `scripted-auth` callee (ADR 0054).
 */
function nestedInput(ctx: RunContext, args: Args, call: string): { stepId: string; input: StepInput } {
  if (ctx.depth + 1 > MAX_SEND_DEPTH) {
    throw new EngineError('ENGINE_SEND_DEPTH', `${call}: more than ${MAX_SEND_DEPTH} nested step calls`);
  }
  const stepId = stringArg(args[0], `${call}: stepId`);
  checkSendTarget(ctx, stepId, call);
  const headers = Object.create(null) as Record<string, string[]>;
  const h = args[2];
  if (typeof h === 'object' && h !== null) {
    for (const [k, v] of Object.entries(h)) headers[k] = Array.isArray(v) ? v.map(String) : [String(v)];
  }
  const body = typeof args[1] === 'string' ? args[1] : undefined;
  if (ctx.isAuth) return { stepId, input: authStepInput(ctx, body, headers, args[3]) };
  return { stepId, input: { body, stream: undefined, headers, properties: {} } };
}

/** A step result as the sandbox turns it into a result object (prelude `resultObject`). */
export function resultView(r: StepResult): unknown {
  const headers = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of Object.entries(r.headers)) headers[k.toLowerCase()] = [v];
  const body = r.body instanceof Uint8Array ? new TextDecoder().decode(r.body) : (r.body ?? null);
  const properties = { ...r.properties };
  if (r.status !== undefined) properties['status_code'] ??= String(r.status);
  return { body, properties, headers, errored: r.errored, errors: r.errors };
}

/**
 * `sendToStep(stepId, body[, headers])`: runs the step now and returns its result to the script. A callee that
 * errored gets a `debug` line (`source: 'engine'`) naming it and its errors: a caller that ignores the result
 * would otherwise leave no trace of why.
 */
export async function sendToStep(ctx: RunContext, args: Args): Promise<unknown> {
  const { stepId, input } = nestedInput(ctx, args, 'sendToStep');
  const r = await ctx.shared.runNested(stepId, input, ctx.depth + 1, ctx.step.workflowIndex);
  if (r.errored) {
    const text = `sendToStep from "${ctx.step.stepId}": step errored: ${r.errors.join('; ')}`;
    const message = ctx.shared.secrets.scrubPrefix(text, MAX_NESTED_ERROR_CHARS);
    ctx.shared.host.log({ level: 'debug', message, stepId, source: 'engine' });
  }
  return resultView(r);
}

/** `sendToStepAndForget(stepId, body[, headers])`: starts the step and returns at once. */
export function sendToStepAndForget(ctx: RunContext, args: Args): void {
  const { stepId, input } = nestedInput(ctx, args, 'sendToStepAndForget');
  ctx.shared.forget(stepId, input, ctx.depth + 1, ctx.step.workflowIndex);
}
