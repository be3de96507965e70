import { PolicyError } from '../errors.js';

/** Where a configuration problem sits: entry index, host id (when known) and field. */
export interface ConfigWhere {
  readonly index: number;
  readonly hostId?: string;
}

/** Throws POLICY_CONFIG_INVALID naming the entry and field. Never includes configured values. */
export function configError(
  where: ConfigWhere,
  field: string,
  why: string,
  rule: string,
  cause?: unknown,
): never {
  const who = where.hostId === undefined ? `host entry ${where.index}` : `host ${where.hostId}`;
  throw new PolicyError('POLICY_CONFIG_INVALID', `${who}: ${field} ${why}`, {
    cause,
    details: {
      index: where.index,
      ...(where.hostId === undefined ? {} : { hostId: where.hostId }),
      field,
      rule,
    },
  });
}

/** True for a plain JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
