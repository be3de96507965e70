import type { IncomingMessage, ServerResponse } from 'node:http';
import { accepts, vary } from './plain-http.js';
import { RequestError } from './errors.js';

export const OCTET_STREAM = 'application/octet-stream';
export const TEXT_PLAIN = 'text/plain';
export const JSON_TYPE = 'application/json';

/**
 * The best of `offered` for the request's `Accept` (a missing header accepts anything: the first offer).
 * Checked before the body is read.
 * @throws RequestError `REQUEST_NOT_ACCEPTABLE` listing what the endpoint can produce.
 */
export function negotiate(
  req: IncomingMessage & { res?: ServerResponse | undefined },
  offered: readonly string[],
): string {
  // The answer depends on Accept: caches must key on it (also for the 406 below).
  const res = req.res;
  // As `res.vary('Accept')` would set it; that call (which parses and merges an existing value) only when there is one.
  if (res !== undefined) {
    if (res.getHeader('Vary') === undefined) res.setHeader('Vary', 'Accept');
    else vary(res, 'Accept');
  }
  // The common cases, answered as `req.accepts` answers them: no header or `*/*` takes the first offer, and a
  // header that is exactly one offered type (no parameters, no list) takes that type.
  const accept = req.headers.accept;
  if (accept === undefined || accept === '*/*') return offered[0]!;
  if (offered.includes(accept)) return accept;
  const chosen = accepts(req, offered);
  if (typeof chosen === 'string') return chosen;
  throw new RequestError(
    'REQUEST_NOT_ACCEPTABLE',
    `the Accept header excludes every type this endpoint produces: ${offered.join(', ')}`,
  );
}
