import { randomUUID } from 'node:crypto';

/**
 * The characters and length an inbound `X-Request-Id` may have (the same rule as the agent's trigger servers,
 * `@org/workflow-runtime` `REQUEST_ID_PATTERN`): nothing a log line or a header could be bent with.
 */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's own id when it is one valid `X-Request-Id` value, else a fresh UUID. */
export function requestIdFrom(header: string | readonly string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID_PATTERN.test(header) ? header : randomUUID();
}
