import type { CompiledAllowList } from './allow-list.js';
import { compileAllowList } from './allow-list.js';
import type { BaseUrl } from './base-url.js';
import { parseBaseUrl } from './base-url.js';
import type { HostEntry, LegacyHostsMap } from './config.js';
import { toHostEntries } from './config.js';
import { PolicyError } from './errors.js';
import type { CompiledHeaders } from './headers.js';
import { compileFixedHeaders } from './headers.js';
import type { ConfigWhere } from './internal/config-error.js';
import { configError, isPlainObject } from './internal/config-error.js';
import { MAX_ALLOW_LIST_ENTRIES, MAX_HOST_ID_CHARS } from './limits.js';

/** Options of {@link compileHostPolicy}. */
export interface CompileHostPolicyOptions {
  /**
   * Host ids whose calls may reach loopback, private (RFC 1918, ULA) and shared (100.64/10) addresses.
   * Metadata, link-local and other special addresses stay denied. A policy option rather than a host field
   * because the bootstrap schema refuses unknown fields (SPEC.md §7.3).
   */
  readonly allowPrivateNetwork?: readonly string[];
}

/** One compiled host. Holds fixed header values (secrets): do not log it. Never holds restricted `data`. */
export interface CompiledHost {
  readonly id: string;
  readonly transport: 'http' | 'inProc';
  /** The base URL, for `http` hosts; an `inProc` host has base path `/` and no origin. */
  readonly base: BaseUrl | undefined;
  readonly basePath: string;
  readonly hasTrailingSlash: boolean;
  readonly inProcServerId: string | undefined;
  readonly inProcDeploymentId: string | undefined;
  readonly headers: CompiledHeaders;
  /** Undefined when the entry has no allowList: every method and path is allowed. */
  readonly allowList: CompiledAllowList | undefined;
  readonly authenticationHost: boolean;
  readonly allowPrivateNetwork: boolean;
  readonly timeoutMs: number | undefined;
}

/** A compiled policy: hosts by exact id (no case folding, no trimming). */
export interface HostPolicy {
  readonly hosts: ReadonlyMap<string, CompiledHost>;
}

const FIELDS = new Set([
  'id',
  'host',
  'transport',
  'inProcServerId',
  'inProcDeploymentId',
  'headers',
  'allowList',
  'authenticationHost',
  'data',
  'httpTimeout',
]);

function checkId(entry: Record<string, unknown>, index: number): string {
  const id = entry['id'];
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_HOST_ID_CHARS) {
    return configError(
      { index },
      'id',
      `must be a string of 1 to ${MAX_HOST_ID_CHARS} characters`,
      'host-id',
    );
  }
  return id;
}

function toBoolean(v: unknown, where: ConfigWhere, field: string): boolean {
  if (v === undefined || v === false || v === 'false') return false;
  if (v === true || v === 'true') return true;
  return configError(where, field, 'must be true, false, "true" or "false"', 'boolean');
}

function optionalString(v: unknown, where: ConfigWhere, field: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string' && v.length > 0) return v;
  return configError(where, field, 'must be a non-empty string', 'string');
}

function checkTimeout(v: unknown, where: ConfigWhere): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 2_147_483_647) return v;
  return configError(where, 'httpTimeout', 'must be a positive integer of milliseconds', 'timeout');
}

function checkAllowList(v: unknown, where: ConfigWhere & { hostId: string }): CompiledAllowList | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length > MAX_ALLOW_LIST_ENTRIES) {
    return configError(
      where,
      'allowList',
      `must be an array of at most ${MAX_ALLOW_LIST_ENTRIES} entries`,
      'allow-list',
    );
  }
  v.forEach((e: unknown, i) => {
    if (!isPlainObject(e) || Object.keys(e).some((k) => k !== 'method' && k !== 'uriPattern')) {
      configError(where, `allowList[${i}]`, 'must be {method, uriPattern}', 'allow-list');
    }
  });
  return compileAllowList(v as HostEntry['allowList'] & object, where);
}

function compileTransport(entry: Record<string, unknown>, where: ConfigWhere & { hostId: string }) {
  const transport = entry['transport'] ?? 'http';
  if (transport !== 'http' && transport !== 'inProc') {
    return configError(where, 'transport', 'must be "http" or "inProc"', 'transport');
  }
  if (transport === 'http') {
    if (entry['inProcServerId'] !== undefined || entry['inProcDeploymentId'] !== undefined) {
      configError(where, 'inProcServerId', 'is only valid with transport "inProc"', 'transport');
    }
    const base = parseBaseUrl(entry['host'], where);
    return { transport, base, basePath: base.basePath, hasTrailingSlash: base.hasTrailingSlash } as const;
  }
  const inProcServerId = optionalString(entry['inProcServerId'], where, 'inProcServerId');
  if (inProcServerId === undefined)
    configError(where, 'inProcServerId', 'is required with transport "inProc"', 'transport');
  if (entry['host'] !== undefined)
    configError(where, 'host', 'is not used with transport "inProc"', 'transport');
  return { transport, base: undefined, basePath: '/', hasTrailingSlash: true, inProcServerId } as const;
}

function compileEntry(raw: unknown, index: number, privateIds: ReadonlySet<string>): CompiledHost {
  if (!isPlainObject(raw)) return configError({ index }, 'entry', 'must be an object', 'entry-type');
  const id = checkId(raw, index);
  const where = { index, hostId: id };
  for (const key of Object.keys(raw)) {
    if (!FIELDS.has(key)) configError(where, key, 'is not a known field', 'unknown-field');
  }
  if (raw['data'] !== undefined && !isPlainObject(raw['data']))
    configError(where, 'data', 'must be an object', 'data');
  const t = compileTransport(raw, where);
  return {
    id,
    ...t,
    inProcServerId: t.transport === 'inProc' ? t.inProcServerId : undefined,
    inProcDeploymentId: optionalString(raw['inProcDeploymentId'], where, 'inProcDeploymentId'),
    headers: compileFixedHeaders(raw['headers'], where),
    allowList: checkAllowList(raw['allowList'], where),
    authenticationHost: toBoolean(raw['authenticationHost'], where, 'authenticationHost'),
    allowPrivateNetwork: privateIds.has(id),
    timeoutMs: checkTimeout(raw['httpTimeout'], where),
  };
}

function checkPrivateIds(
  options: CompileHostPolicyOptions,
  hosts: ReadonlyMap<string, unknown>,
): Set<string> {
  const ids: readonly unknown[] = options.allowPrivateNetwork ?? [];
  if (!Array.isArray(ids)) throw new TypeError('options.allowPrivateNetwork must be an array of host ids');
  for (const id of ids) {
    if (typeof id !== 'string' || !hosts.has(id)) {
      throw new PolicyError(
        'POLICY_CONFIG_INVALID',
        'allowPrivateNetwork names a host id that is not configured',
        {
          details: {
            rule: 'allow-private-network',
            field: 'allowPrivateNetwork',
            ...(typeof id === 'string' ? { hostId: id } : {}),
          },
        },
      );
    }
  }
  return new Set(ids as readonly string[]);
}

/**
 * Validates `allowExternalHostAccess` (or the legacy `hosts` map) into a compiled policy. Host ids are exact
 * (no case folding). Restricted `data` is validated as an object but never kept. SPEC.md §2 lists every rule.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID naming the entry index, host id, field and rule; messages never
 * carry header values or other configured values
 * @throws TypeError when `options.allowPrivateNetwork` is not an array
 */
export function compileHostPolicy(
  hosts: readonly HostEntry[] | LegacyHostsMap,
  options: CompileHostPolicyOptions = {},
): HostPolicy {
  const entries = toHostEntries(hosts);
  const ids = new Map<string, number>();
  entries.forEach((e: unknown, index) => {
    const id = isPlainObject(e)
      ? checkId(e, index)
      : configError({ index }, 'entry', 'must be an object', 'entry-type');
    if (ids.has(id))
      configError({ index, hostId: id }, 'id', 'is used by more than one entry', 'host-id-duplicate');
    ids.set(id, index);
  });
  const privateIds = checkPrivateIds(options, ids);
  const compiled = new Map<string, CompiledHost>();
  entries.forEach((e, index) => {
    const host = compileEntry(e, index, privateIds);
    compiled.set(host.id, Object.freeze(host));
  });
  return Object.freeze({ hosts: compiled });
}
