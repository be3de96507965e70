import { SECRET_FORMS } from './redact.js';
import type { EngineShared } from './run-context.js';
import type { OutboundRequest } from './types.js';

const utf8 = new TextDecoder('utf-8');

/**
 * The encoded forms of each restricted value, computed once per value rather than on every outbound call; kept
 * per host value set, so they go when the engine that holds the set goes.
 */
const formsBySet = new WeakMap<Set<string>, Map<string, readonly string[]>>();

function formsOf(values: Set<string>, value: string): readonly string[] {
  let cache = formsBySet.get(values);
  if (!cache) formsBySet.set(values, (cache = new Map<string, readonly string[]>()));
  let f = cache.get(value);
  if (!f) cache.set(value, (f = [...new Set(SECRET_FORMS.map(({ encode }) => encode(value)))]));
  return f;
}

/**
 * True when `req` would carry restricted data of some host other than `req.hostId` (docs/security-requirements.md A.2,
 * "plaintext flows only to the owning authentication host"): in the path, a header name or value, or the body —
 * text or bytes (decoded as UTF-8) — in any of the encoded forms the redactor tracks. Used for the main call of a
 * step and for `callAuthenticationHost` alike.
 */
export function carriesRestricted(shared: EngineShared, req: OutboundRequest): boolean {
  if (shared.restricted.size === 0) return false;
  const body = typeof req.body === 'string' ? req.body : req.body ? utf8.decode(req.body) : '';
  const text = [req.path, ...Object.keys(req.headers), ...Object.values(req.headers), body].join('\n');
  for (const [hostId, values] of shared.restricted) {
    if (hostId === req.hostId) continue;
    for (const v of values) for (const form of formsOf(values, v)) if (text.includes(form)) return true;
  }
  return false;
}
