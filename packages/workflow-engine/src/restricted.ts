import { SECRET_FORMS } from './redact.js';
import type { EngineShared } from './run-context.js';
import type { OutboundRequest } from './types.js';

const utf8 = new TextDecoder('utf-8');

/**
 * True when `req` would carry restricted data of some host other than `req.hostId` (security-requirements A.2,
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
    for (const v of values) for (const { encode } of SECRET_FORMS) if (text.includes(encode(v))) return true;
  }
  return false;
}
