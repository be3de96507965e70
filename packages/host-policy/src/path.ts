import { MAX_PATH_CHARS } from './limits.js';
import type { Refusal } from './refusal.js';
import { refusal } from './refusal.js';

/** A path joined to a base: the full pathname (what allowList patterns see) and the query (`?…` or empty). */
export interface ComposedPath {
  readonly pathname: string;
  readonly search: string;
}

/** The base a path is joined to: its pathname and whether that pathname ends with `/`. */
export interface PathBase {
  readonly basePath: string;
  readonly hasTrailingSlash: boolean;
}

const R = {
  length: refusal('POLICY_PATH_INVALID', 'path-length', `path is longer than ${MAX_PATH_CHARS} characters`),
  control: refusal('POLICY_PATH_INVALID', 'path-control-char', 'path contains a control character'),
  char: refusal('POLICY_PATH_INVALID', 'path-char', 'path contains a character that must be percent-encoded'),
  fragment: refusal('POLICY_PATH_INVALID', 'path-fragment', 'path contains a fragment (#)'),
  escape: refusal('POLICY_PATH_INVALID', 'path-bad-escape', 'path contains a malformed percent escape'),
  encodedControl: refusal('POLICY_PATH_INVALID', 'path-encoded-control', 'path encodes a control character'),
  doubleEncoded: refusal('POLICY_PATH_INVALID', 'path-double-encoding', 'path encodes a percent sign'),
  emptySegment: refusal('POLICY_PATH_INVALID', 'path-empty-segment', 'path contains an empty segment (//)'),
  backslash: refusal('POLICY_PATH_ESCAPES_BASE', 'path-backslash', 'path contains a backslash'),
  encodedSeparator: refusal(
    'POLICY_PATH_ESCAPES_BASE',
    'path-encoded-separator',
    'path encodes a dot, slash or backslash',
  ),
  dotSegment: refusal('POLICY_PATH_ESCAPES_BASE', 'path-dot-segment', 'path contains a dot segment'),
  schemeRelative: refusal('POLICY_PATH_ESCAPES_BASE', 'path-scheme-relative', 'path starts with //'),
  scheme: refusal('POLICY_PATH_ESCAPES_BASE', 'path-scheme', 'path starts with a scheme or port (:)'),
  hostPrefix: refusal(
    'POLICY_PATH_ESCAPES_BASE',
    'path-host-prefix',
    'path starts with @, . or : and the base has no trailing slash',
  ),
} as const;

/** Character classes, SPEC.md §3.2: 1 = RFC 3986 pchar (minus `%`), 0 = refused; specials handled inline. */
const PCHAR = new Uint8Array(128);
for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@") {
  PCHAR[ch.charCodeAt(0)] = 1;
}
const SLASH = 0x2f;
const QUESTION = 0x3f;
const PERCENT = 0x25;
const HASH = 0x23;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const COLON = 0x3a;
const AT = 0x40;
const SEMI = 0x3b;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Classifies one percent escape at `i` (the `%`). Returns a refusal or undefined when acceptable. */
function checkEscape(path: string, i: number, inQuery: boolean): Refusal | undefined {
  const hi = hexValue(path.charCodeAt(i + 1));
  const lo = hexValue(path.charCodeAt(i + 2));
  if (hi < 0 || lo < 0) return R.escape;
  if (inQuery) return undefined;
  const v = hi * 16 + lo;
  if (v === DOT || v === SLASH || v === BACKSLASH) return R.encodedSeparator;
  if (v < 0x20 || v === 0x7f) return R.encodedControl;
  if (v === PERCENT) return R.doubleEncoded;
  return undefined;
}

/** Checks the segment path[from, to): dot segments (also `..;x`), and a colon in the first segment. */
function checkSegment(path: string, from: number, to: number, first: boolean): Refusal | undefined {
  if (path.charCodeAt(from) === DOT) {
    // `.`, `..`, and `..;x` (a dot segment to servers that drop `;` parameters)
    const second = from + 1 < to ? path.charCodeAt(from + 1) : -1;
    const at = second === DOT ? from + 2 : from + 1;
    if ((second === -1 || second === DOT || second === SEMI) && (at >= to || path.charCodeAt(at) === SEMI)) {
      return R.dotSegment;
    }
  }
  if (first) {
    const colon = path.indexOf(':', from);
    if (colon >= 0 && colon < to) return R.scheme;
  }
  return undefined;
}

/** Checks one character at `i` outside escapes and separators. */
function checkChar(c: number, inQuery: boolean): Refusal | undefined {
  if (c < 0x20 || c === 0x7f) return R.control;
  if (c === BACKSLASH) return R.backslash;
  if (c === HASH) return R.fragment;
  if (c < 0x80 && PCHAR[c] === 1) return undefined;
  if (inQuery && (c === QUESTION || c === SLASH)) return undefined;
  return R.char;
}

/**
 * Validates a workflow path and joins it to a base path (SPEC.md §3). Pure; never throws.
 * Returns the composed pathname and query, or the refusal.
 */
export function composePath(base: PathBase, path: string): ComposedPath | Refusal {
  if (path.length > MAX_PATH_CHARS) return R.length;
  let start = 0;
  if (path.charCodeAt(0) === SLASH) {
    if (path.charCodeAt(1) === SLASH) return R.schemeRelative;
    start = 1;
  }
  const lead = path.charCodeAt(start);
  if (!base.hasTrailingSlash && (lead === AT || lead === DOT || lead === COLON)) return R.hostPrefix;
  const scanned = scan(path, start);
  if (typeof scanned !== 'number') return scanned;
  const rest = path.slice(start, scanned);
  const search = path.slice(scanned);
  if (rest === '' && !base.hasTrailingSlash) return { pathname: base.basePath, search };
  return { pathname: (base.hasTrailingSlash ? base.basePath : base.basePath + '/') + rest, search };
}

/** Scans from `start`; returns the index where the query begins (or the length), or a refusal. */
function scan(path: string, start: number): number | Refusal {
  let segStart = start;
  let queryAt = -1;
  for (let i = start; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c < 0x80 && PCHAR[c] === 1) continue; // fast path: an ordinary character
    const inQuery = queryAt >= 0;
    let bad: Refusal | undefined;
    if (c === PERCENT) {
      bad = checkEscape(path, i, inQuery);
      i += 2;
    } else if (c === SLASH && !inQuery) {
      if (i === segStart) return R.emptySegment;
      bad = checkSegment(path, segStart, i, segStart === start);
      segStart = i + 1;
    } else if (c === QUESTION && !inQuery) {
      bad = checkSegment(path, segStart, i, segStart === start);
      queryAt = i;
    } else {
      bad = checkChar(c, inQuery);
    }
    if (bad !== undefined) return bad;
  }
  if (queryAt >= 0) return queryAt;
  return checkSegment(path, segStart, path.length, segStart === start) ?? path.length;
}
