import type { IncomingMessage } from 'node:http';
import accepts from 'accepts';
import { RequestError } from './errors.js';

export const OCTET_STREAM = 'application/octet-stream';
export const TEXT_PLAIN = 'text/plain';
export const JSON_TYPE = 'application/json';

/**
 * The best of `offered` for the request's `Accept` (a missing header accepts anything: the first offer), chosen
 * as Express's `req.accepts(offered)` chooses (the same `accepts` package). Checked before the body is read. The
 * answer depends on `Accept`, so every answer of a negotiating operation carries `Vary: Accept` (the caller's
 * job: {@link OperationSpec.headers}).
 * @throws RequestError `REQUEST_NOT_ACCEPTABLE` listing what the endpoint can produce.
 */
export function negotiate(req: Pick<IncomingMessage, 'headers'>, offered: readonly string[]): string {
  // The common cases, answered as `req.accepts` answers them: no header or `*/*` takes the first offer, and a
  // header that is exactly one offered type (no parameters, no list) takes that type.
  const accept = req.headers.accept;
  if (accept === undefined || accept === '*/*') return offered[0]!;
  if (offered.includes(accept)) return accept;
  const chosen = accepts(req as IncomingMessage).types([...offered]);
  if (typeof chosen === 'string') return chosen;
  throw new RequestError(
    'REQUEST_NOT_ACCEPTABLE',
    `the Accept header excludes every type this endpoint produces: ${offered.join(', ')}`,
  );
}
