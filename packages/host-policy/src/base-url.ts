import { classifyAddress } from './address.js';
import type { AddressKind } from './address.js';
import type { ConfigWhere } from './internal/config-error.js';
import { configError } from './internal/config-error.js';
import { MAX_BASE_URL_CHARS } from './limits.js';
import { composePath } from './path.js';

/** A validated, normalised base URL (SPEC.md §2). */
export interface BaseUrl {
  readonly protocol: 'http:' | 'https:';
  /** Lower-case host without a trailing dot; IPv4 in dotted-quad form; IPv6 in brackets. */
  readonly hostname: string;
  /** Explicit port, or the scheme's default. */
  readonly port: number;
  /** `protocol//hostname[:port]`, the port only when not the default. */
  readonly origin: string;
  /** The base pathname, at least `/`. */
  readonly basePath: string;
  readonly hasTrailingSlash: boolean;
  /** Address kind when the hostname is an IP literal (checked by the address policy). */
  readonly literalKind: AddressKind | undefined;
}

const SCHEME_PREFIX = /^https?:\/\//i;

/** Path part of a raw `scheme://authority/path` string, or '' when there is none. */
function rawPathOf(raw: string): string {
  const afterScheme = raw.indexOf('//') + 2;
  const slash = raw.indexOf('/', afterScheme);
  return slash < 0 ? '' : raw.slice(slash);
}

function checkRaw(raw: unknown, where: ConfigWhere): string {
  const fail = (why: string) => configError(where, 'host', why, 'base-url');
  if (typeof raw !== 'string') return fail('must be a string');
  if (raw.length > MAX_BASE_URL_CHARS) return fail(`is longer than ${MAX_BASE_URL_CHARS} characters`);
  if (!/^[\x21-\x7e]+$/.test(raw) || raw.includes('\\'))
    return fail('contains a space, control, backslash or non-ASCII character');
  if (!SCHEME_PREFIX.test(raw)) return fail('must start with http:// or https://');
  if (raw.includes('?') || raw.includes('#')) return fail('must not have a query or fragment');
  const authorityEnd = raw.indexOf('/', raw.indexOf('//') + 2);
  if (raw.slice(0, authorityEnd < 0 ? raw.length : authorityEnd).includes('@'))
    return fail('must not have userinfo');
  return raw;
}

/**
 * Parses and normalises a host's base URL: only http and https, no userinfo, query or fragment, no dot
 * segments or encoded separators in the path. WHATWG URL parsing normalises the host (letter case, IPv4 number
 * forms such as `2130706433` → `127.0.0.1`); a trailing dot on the host is removed.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID naming the entry and the `host` field
 */
export function parseBaseUrl(raw: unknown, where: ConfigWhere): BaseUrl {
  const text = checkRaw(raw, where);
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    return configError(where, 'host', 'is not a valid URL', 'base-url', err);
  }
  if (url.hostname === '' || url.username !== '' || url.password !== '') {
    return configError(where, 'host', 'must name a host and no userinfo', 'base-url');
  }
  const rawPath = rawPathOf(text);
  const checked = composePath({ basePath: '/', hasTrailingSlash: true }, rawPath);
  if ('code' in checked) return configError(where, 'host', `path is refused (${checked.rule})`, 'base-url');
  const hostname = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  const protocol = url.protocol as 'http:' | 'https:';
  const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (port === 0) return configError(where, 'host', 'must not use port 0', 'base-url');
  const basePath = rawPath === '' ? '/' : rawPath;
  const isIpLiteral = /^[\d.]+$/.test(hostname) || hostname.startsWith('[');
  return {
    protocol,
    hostname,
    port,
    origin: `${protocol}//${hostname}${url.port === '' ? '' : `:${url.port}`}`,
    basePath,
    hasTrailingSlash: basePath.endsWith('/'),
    literalKind: isIpLiteral ? classifyAddress(hostname) : undefined,
  };
}
