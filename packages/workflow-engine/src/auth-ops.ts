import { untilAborted } from './abort.js';
import { carriesRestricted } from './restricted.js';
import { EngineError } from './errors.js';
import { notA, stringArg } from './host-args.js';
import { MIN_SECRET_CHARS } from './redact.js';
import type { RunContext } from './run-context.js';

type Args = unknown[];

/** docs/interfaces.md §5.5: these calls exist only in an authentication context (README.md "Secrets"). */
export function requireAuth(ctx: RunContext, call: string): void {
  if (!ctx.isAuth) {
    throw new EngineError('ENGINE_NOT_PERMITTED', `${call} is only available in an authentication context`);
  }
}

function hostIdArg(args: Args, call: string): string {
  const id = args[0];
  if (typeof id !== 'string' || id === '') throw notA(`${call}: hostId`, 'a non-empty string', id);
  return id;
}

function collect(value: unknown, into: Set<string>, depth = 0): void {
  if (depth > 64) return;
  if (typeof value === 'string' && value.length >= MIN_SECRET_CHARS) into.add(value);
  else if (typeof value === 'object' && value !== null)
    for (const v of Object.values(value)) collect(v, into, depth + 1);
}

/**
 * `getRestrictedDataFromHost(hostId)`: the app decrypts `-2/` values at this call (lazy decryption). Every value
 * is registered as a secret before the script sees it, and remembered per host so that the main call can be
 * refused when it would carry one to another host.
 */
export async function restrictedData(ctx: RunContext, args: Args): Promise<string> {
  requireAuth(ctx, 'getRestrictedDataFromHost');
  const hostId = hostIdArg(args, 'getRestrictedDataFromHost');
  const json = await ctx.shared.host.getRestrictedData(hostId);
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = json;
  }
  ctx.shared.secrets.add(json);
  ctx.shared.secrets.addLeaves(parsed);
  let values = ctx.shared.restricted.get(hostId);
  if (!values) ctx.shared.restricted.set(hostId, (values = new Set()));
  collect(parsed, values);
  return json;
}

function headersArg(v: unknown): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  if (typeof v !== 'object' || v === null) return out;
  for (const [k, x] of Object.entries(v)) out[k] = Array.isArray(x) ? x.map(String).join(', ') : String(x);
  return out;
}

/**
 * `callAuthenticationHost(hostId, path, { method, headers, body })`: the authentication processor's own call
 * (e.g. a token request), made with `isAuthenticationProcessor: true`. Header values sent are credentials and
 * are registered as secrets. Returns `{ status, headers, body }` (body decoded as UTF-8).
 */
export async function authCall(ctx: RunContext, args: Args): Promise<unknown> {
  requireAuth(ctx, 'callAuthenticationHost');
  const hostId = hostIdArg(args, 'callAuthenticationHost');
  const path = stringArg(args[1], 'callAuthenticationHost: path');
  const body = typeof args[4] === 'string' ? args[4] : undefined;
  const method = typeof args[2] === 'string' ? args[2].toUpperCase() : body === undefined ? 'GET' : 'POST';
  const headers = headersArg(args[3]);
  for (const v of Object.values(headers)) ctx.shared.secrets.add(v);
  const req = {
    hostId,
    path,
    method,
    headers,
    body,
    isAuthenticationProcessor: true,
    timeoutMs: ctx.step.httpTimeout,
    signal: ctx.signal,
  };
  if (carriesRestricted(ctx.shared, req))
    throw new EngineError(
      'ENGINE_NOT_PERMITTED',
      'the call would carry restricted host data to another host',
    );
  const res = await untilAborted(ctx.shared.host.callOutbound(req), ctx.signal);
  const lower = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of Object.entries(res.headers)) lower[k.toLowerCase()] = v;
  const text = new TextDecoder().decode(res.body);
  // The response of a login call is a credential (ADR 0054).
  ctx.shared.secrets.addText(text);
  return { status: res.status, headers: lower, body: text };
}

/**
 * Registers a header value set in an authentication context as a secret, with the token after an
 * auth scheme (`Bearer <token>`) on its own, so that neither appears in a log line even one written
 * by the same processor right after `setHeader`.
 */
export function registerAuthHeaderValue(secrets: { add(value: string): void }, value: string): void {
  secrets.add(value);
  const token = /^\S+\s+(\S.*)$/.exec(value)?.[1];
  if (token) secrets.add(token);
}
