import { EngineError } from './errors.js';
import type { RunContext } from './run-context.js';
import type { StepInput } from './types.js';
import { mergeData } from './workflow-model.js';

/** The exchange property that carries data into a `scripted-auth` step (docs/interfaces.md §5.5). */
export const AUTH_DATA_PROPERTY = 'AGENT_AUTH_DATA';
/** The name existing scripts use for {@link AUTH_DATA_PROPERTY}; both are honoured. */
export const LEGACY_AUTH_DATA_PROPERTY = 'OPSCOTCH_AUTH_DATA';

/** The step type whose every processor runs in authentication context. */
const AUTH_STEP_TYPE = 'scripted-auth';

/**
 * The step-call rule of ADR 0054: from an authentication context only into a `scripted-auth` step (S121), and
 * into a `scripted-auth` step only from an authentication context (S123). An unknown step is "not a
 * `scripted-auth` step": from an authentication context it is refused here; elsewhere the call goes on and
 * reports `ENGINE_STEP_NOT_FOUND` as before.
 *
 * @throws EngineError `ENGINE_NOT_PERMITTED`.
 */
export function checkSendTarget(ctx: RunContext, stepId: string, call: string): void {
  const intoAuth = ctx.shared.stepType(stepId, ctx.step.workflowIndex) === AUTH_STEP_TYPE;
  if (ctx.isAuth && !intoAuth) {
    throw new EngineError(
      'ENGINE_NOT_PERMITTED',
      `${call} from an authentication context may only call a scripted-auth step`,
    );
  }
  if (!ctx.isAuth && intoAuth) {
    throw new EngineError(
      'ENGINE_NOT_PERMITTED',
      `${call} into a scripted-auth step is only available in an authentication context`,
    );
  }
}

function parseObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/**
 * The callee's `AGENT_AUTH_DATA` (ADR 0054): the caller's property (`AGENT_AUTH_DATA`, else
 * `OPSCOTCH_AUTH_DATA`); when it and the body passed are both JSON objects, the body deep-merged over it
 * (`mergeJsonStrings(property, body)`). Undefined when the caller set neither property.
 */
export function calleeAuthData(
  properties: Record<string, string>,
  body: string | undefined,
): string | undefined {
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(properties, k);
  const passed = has(AUTH_DATA_PROPERTY)
    ? properties[AUTH_DATA_PROPERTY]
    : has(LEGACY_AUTH_DATA_PROPERTY)
      ? properties[LEGACY_AUTH_DATA_PROPERTY]
      : undefined;
  if (passed === undefined) return undefined;
  const base = parseObject(passed);
  const extra = parseObject(body);
  return base && extra ? JSON.stringify(mergeData(base, extra)) : passed;
}

/** The caller's run properties as the sandbox sent them: string values only, `__proto__` kept as data. */
function propertiesArg(v: unknown): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return out;
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'string')
      Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * The input of a `scripted-auth` step called from an authentication context. The callee gets the caller's
 * exchange properties (as the script holds them at the call) and `AGENT_AUTH_DATA` / `OPSCOTCH_AUTH_DATA`
 * ({@link calleeAuthData}). Everything that crosses is registered as a secret first: the body, header values,
 * the auth data and every property the authentication context set or changed (properties it only inherited
 * from ordinary processors are no secret to them).
 */
export function authStepInput(
  ctx: RunContext,
  body: string | undefined,
  headers: Record<string, string[]>,
  rawProperties: unknown,
): StepInput {
  const secrets = ctx.shared.secrets;
  const baseline = ctx.authBaseline ?? {};
  const properties = propertiesArg(rawProperties);
  for (const [k, v] of Object.entries(properties)) {
    if (!Object.prototype.hasOwnProperty.call(baseline, k) || baseline[k] !== v) secrets.add(v);
  }
  const authData = calleeAuthData(properties, body);
  if (authData !== undefined) {
    properties[AUTH_DATA_PROPERTY] = authData;
    properties[LEGACY_AUTH_DATA_PROPERTY] = authData;
    secrets.add(authData);
  }
  if (body !== undefined) secrets.add(body);
  for (const values of Object.values(headers)) for (const v of values) secrets.add(v);
  return { body, stream: undefined, headers, properties };
}
