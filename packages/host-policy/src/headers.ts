import type { ConfigWhere } from './internal/config-error.js';
import { configError, isPlainObject } from './internal/config-error.js';
import { MAX_HEADER_VALUE_CHARS, MAX_HEADERS } from './limits.js';
import type { Refusal } from './refusal.js';
import { refusal } from './refusal.js';

/**
 * Header names a workflow may never set (compared case-insensitively), SPEC.md §6: `host` (the upstream must see
 * the configured host), hop-by-hop headers (RFC 9110 §7.6.1) and framing headers, which `sendOutbound` sets
 * itself. Every name starting with `proxy-` is refused as well.
 */
export const FORBIDDEN_HEADER_NAMES: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
  'http2-settings',
]);

/** Fixed headers of one host, validated at compile time. Values are secrets: never put them in messages. */
export interface CompiledHeaders {
  readonly entries: readonly (readonly [name: string, value: string])[];
  readonly names: ReadonlySet<string>;
}

/** Merged outbound headers (lower-case names, all own properties) and workflow headers dropped in favour of fixed ones. */
export interface MergedHeaders {
  readonly headers: Record<string, string>;
  readonly dropped: readonly string[];
}

const TOKEN = new Uint8Array(128);
for (const ch of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  TOKEN[ch.charCodeAt(0)] = 1;
}

const R = {
  name: refusal('POLICY_HEADER_INVALID', 'header-name', 'a header name is not an RFC 9110 token'),
  value: refusal(
    'POLICY_HEADER_INVALID',
    'header-value',
    'a header value contains CR, LF, TAB, NUL or a control character',
  ),
  valueType: refusal('POLICY_HEADER_INVALID', 'header-value', 'a header value is not a string'),
  valueLength: refusal('POLICY_HEADER_INVALID', 'header-value', 'a header value is too long'),
  count: refusal('POLICY_HEADER_INVALID', 'header-count', `more than ${MAX_HEADERS} headers`),
  duplicate: refusal(
    'POLICY_HEADER_INVALID',
    'header-duplicate',
    'a header name appears twice (case-insensitively)',
  ),
  forbidden: refusal(
    'POLICY_HEADER_FORBIDDEN',
    'header-forbidden',
    'host, hop-by-hop, proxy and framing headers cannot be set by a workflow',
  ),
} as const;

/**
 * True when `name` is a non-empty RFC 9110 token of at most 256 characters.
 *
 * @throws never
 */
export function isHeaderName(name: string): boolean {
  if (name.length === 0 || name.length > 256) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0x80 || TOKEN[c] !== 1) return false;
  }
  return true;
}

/**
 * True when `value` holds only visible ASCII, space and obs-text (0x80–0xFF): no CR, LF, TAB, NUL or other
 * control character (docs/security-requirements.md A.2: rejected, never stripped).
 *
 * @throws never
 */
export function isHeaderValue(value: string): boolean {
  if (value.length > MAX_HEADER_VALUE_CHARS) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/**
 * True when a workflow may not set the header `name` (any letter case).
 *
 * @throws never
 */
export function isForbiddenHeader(name: string): boolean {
  return isForbiddenLower(name.toLowerCase());
}

/** {@link isForbiddenHeader} for a name already in lower case. */
function isForbiddenLower(lower: string): boolean {
  return FORBIDDEN_HEADER_NAMES.has(lower) || lower.startsWith('proxy-');
}

/** Checks one workflow header given its lower-case name; returns a refusal or undefined. */
function checkWorkflowHeader(name: string, lower: string, value: unknown): Refusal | undefined {
  if (!isHeaderName(name)) return R.name;
  if (typeof value !== 'string') return R.valueType;
  if (value.length > MAX_HEADER_VALUE_CHARS) return R.valueLength;
  if (!isHeaderValue(value)) return R.value;
  if (isForbiddenLower(lower)) return R.forbidden;
  return undefined;
}

const NO_NAMES: readonly string[] = Object.freeze([]);

/** Sets an own data property, so that a header named `__proto__` stays an ordinary header. */
function put(headers: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__')
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  else headers[name] = value;
}

/**
 * Merges fixed host headers with workflow headers (SPEC.md §6). Fixed headers always win: a workflow header
 * with the same name (any case) is dropped and reported. Returns the refusal for the first bad workflow header.
 */
export function mergeHeaders(
  fixed: CompiledHeaders,
  workflow: Readonly<Record<string, unknown>> | undefined,
): MergedHeaders | Refusal {
  const headers: Record<string, string> = {};
  for (const [name, value] of fixed.entries) put(headers, name, value);
  if (workflow === undefined) return { headers, dropped: NO_NAMES };
  const names = Object.keys(workflow);
  if (names.length > MAX_HEADERS) return R.count;
  let dropped: string[] | undefined;
  for (const name of names) {
    const lower = name.toLowerCase();
    const bad = checkWorkflowHeader(name, lower, workflow[name]);
    if (bad !== undefined) return bad;
    if (fixed.names.has(lower)) {
      if (dropped?.includes(lower) === true) return R.duplicate;
      (dropped ??= []).push(lower);
    } else if (Object.hasOwn(headers, lower)) return R.duplicate;
    else put(headers, lower, workflow[name] as string);
  }
  return { headers, dropped: dropped ?? NO_NAMES };
}

/**
 * Validates a host's fixed `headers` map: token names, clean values, no forbidden names, no duplicates under
 * case folding, at most MAX_HEADERS entries. Names are lower-cased. Messages name the header, never its value.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID naming the entry and the `headers.<name>` field
 */
export function compileFixedHeaders(raw: unknown, where: ConfigWhere): CompiledHeaders {
  if (raw === undefined) return { entries: [], names: new Set() };
  if (!isPlainObject(raw) || Object.keys(raw).length > MAX_HEADERS) {
    return configError(where, 'headers', `must be an object of at most ${MAX_HEADERS} headers`, 'headers');
  }
  const entries: [string, string][] = [];
  const names = new Set<string>();
  for (const [name, value] of Object.entries(raw)) {
    const field = `headers.${isHeaderName(name) ? name : '(invalid name)'}`;
    if (!isHeaderName(name)) configError(where, field, 'is not an RFC 9110 token', 'header-name');
    if (typeof value !== 'string' || !isHeaderValue(value)) {
      configError(where, field, 'value must be a string without control characters', 'header-value');
    }
    const lower = name.toLowerCase();
    if (isForbiddenLower(lower)) configError(where, field, 'cannot be configured', 'header-forbidden');
    if (names.has(lower)) configError(where, field, 'appears twice (case-insensitively)', 'header-duplicate');
    names.add(lower);
    entries.push([lower, value]);
  }
  return { entries, names };
}
