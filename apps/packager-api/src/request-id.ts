import { randomUUID } from 'node:crypto';

/**
 * The characters and length an inbound `X-Request-Id` may have (the same rule as the agent's trigger servers,
 * `@org/workflow-runtime` `REQUEST_ID_PATTERN`): nothing a log line or a header could be bent with.
 */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request's own id when it is one valid `X-Request-Id` value, else a fresh UUID. */
export function requestIdFrom(header: string | readonly string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
}

/** A problem `instance` for a request id: `urn:uuid:` for a UUID, else the id in the examples namespace. */
export function instanceOf(reqId: string): string {
  return UUID.test(reqId) ? `urn:uuid:${reqId}` : `urn:example:oapp:request:${reqId}`;
}
