import type { AllowListEntry } from './allow-list.js';
import { PolicyError } from './errors.js';
import { configError, isPlainObject } from './internal/config-error.js';

/** `stringBoolean` of the bootstrap schema after `${VAR}` substitution. */
export type StringBoolean = boolean | 'true' | 'false';

/** One `allowExternalHostAccess[]` entry (docs/interfaces.md §3.3). Unknown fields are refused. */
export interface HostEntry {
  readonly id: string;
  readonly host?: string;
  readonly transport?: 'http' | 'inProc';
  readonly inProcServerId?: string;
  readonly inProcDeploymentId?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly allowList?: readonly AllowListEntry[];
  readonly authenticationHost?: StringBoolean;
  /** Restricted data: validated as an object, never copied into the compiled policy. */
  readonly data?: unknown;
  readonly httpTimeout?: number;
}

/** One entry of the legacy `hosts` map (docs/interfaces.md §3.6): lowercase `allowlist` of `[method, regex]`. */
export interface LegacyHostEntry {
  readonly host?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly authenticationHost?: StringBoolean;
  readonly allowlist?: readonly (readonly [method: string, uriPattern: string])[];
  readonly data?: unknown;
  readonly httpTimeout?: number;
}

/** The legacy `hosts` map: key = host id. */
export type LegacyHostsMap = Readonly<Record<string, LegacyHostEntry>>;

const LEGACY_FIELDS = new Set(['host', 'headers', 'authenticationHost', 'allowlist', 'data', 'httpTimeout']);

function convertAllowlist(raw: unknown, index: number, hostId: string): AllowListEntry[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw))
    return configError({ index, hostId }, 'allowlist', 'must be an array', 'allow-list');
  return raw.map((pair: unknown, i) => {
    if (!Array.isArray(pair) || pair.length !== 2) {
      return configError(
        { index, hostId },
        `allowlist[${i}]`,
        'must be a [method, regex] pair',
        'allow-list',
      );
    }
    return { method: pair[0] as string, uriPattern: pair[1] as string };
  });
}

/**
 * Converts the legacy `hosts` map into `allowExternalHostAccess` entries, in key order. Field types are checked
 * later by {@link compileHostPolicy}.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID for an entry that is not an object, an unknown field or a malformed
 * `allowlist`
 */
export function convertLegacyHosts(map: LegacyHostsMap): HostEntry[] {
  return Object.keys(map).map((id, index) => {
    const entry: unknown = map[id];
    if (!isPlainObject(entry))
      return configError({ index, hostId: id }, 'entry', 'must be an object', 'entry-type');
    for (const key of Object.keys(entry)) {
      if (!LEGACY_FIELDS.has(key))
        configError({ index, hostId: id }, key, 'is not a known field', 'unknown-field');
    }
    const { allowlist, ...rest } = entry;
    const allowList = convertAllowlist(allowlist, index, id);
    return { ...rest, id, ...(allowList === undefined ? {} : { allowList }) };
  });
}

/**
 * Accepts either form and returns the array form: an array is taken as `allowExternalHostAccess`, a plain object
 * as the legacy `hosts` map.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID when `hosts` is neither, or a legacy entry is malformed
 */
export function toHostEntries(hosts: readonly HostEntry[] | LegacyHostsMap): readonly HostEntry[] {
  if (Array.isArray(hosts)) return hosts as readonly HostEntry[];
  if (isPlainObject(hosts)) return convertLegacyHosts(hosts);
  throw new PolicyError(
    'POLICY_CONFIG_INVALID',
    'hosts must be an array of host entries or a legacy hosts map',
    {
      details: { rule: 'hosts-type' },
    },
  );
}
