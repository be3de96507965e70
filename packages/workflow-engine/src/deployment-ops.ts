import { EngineError } from './errors.js';
import { stringArg } from './host-args.js';
import type { RunContext } from './run-context.js';
import { MAX_SEND_DEPTH, resultView } from './send-ops.js';

const CALL = 'sendToStep(accessId, stepId, body) across deployments';

/**
 * `sendToStep(accessId, stepId, body)` (SPEC.md §5.6): hands the call to the host, which knows the calling
 * deployment and checks both sides' grants. Nothing about the caller comes from the script except the three
 * arguments. Not from an authentication context: what it holds stays in its deployment.
 *
 * @throws EngineError `ENGINE_NOT_PERMITTED`, `ENGINE_UNSUPPORTED` (a host without `sendToDeployment`),
 *   `ENGINE_SEND_DEPTH`; the host's own codes for a refused call.
 */
export async function sendToDeployment(ctx: RunContext, args: unknown[]): Promise<unknown> {
  if (ctx.isAuth)
    throw new EngineError('ENGINE_NOT_PERMITTED', `${CALL} is not available in an authentication context`);
  const host = ctx.shared.host;
  if (host.sendToDeployment === undefined)
    throw new EngineError('ENGINE_UNSUPPORTED', `${CALL} is not provided by this host`);
  if (ctx.depth + 1 > MAX_SEND_DEPTH)
    throw new EngineError('ENGINE_SEND_DEPTH', `sendToStep: more than ${MAX_SEND_DEPTH} nested step calls`);
  const result = await host.sendToDeployment({
    accessId: stringArg(args[0], 'sendToStep: accessId'),
    stepId: stringArg(args[1], 'sendToStep: stepId'),
    body: stringArg(args[2], 'sendToStep: body'),
    depth: ctx.depth + 1,
  });
  return resultView(result);
}
