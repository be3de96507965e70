import { AgentError } from '../errors.js';

/** The entry served for a request path that names a directory (empty, or ending in `/`). */
export const INDEX_ENTRY = 'index.html';

/** Longest entry name (characters) a packaged asset zip may hold. */
export const MAX_ENTRY_NAME_CHARS = 1024;

/** Characters that end the literal start of a trigger path pattern. */
const REGEX_META = new Set(['\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);

// C0 controls and DEL: never part of a name we serve or accept in a zip.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The prefix an `httpFile` trigger strips from the request path before looking up an entry (ADR 0077): the
 * literal start of `trigger.http.path` (up to its first regex metacharacter), cut back to its last `/`.
 * `/static/.*` → `/static/`; `/favicon\.ico` → `/`; `.*` → `/`.
 */
export function assetPrefixOf(pathPattern: string): string {
  let end = 0;
  while (end < pathPattern.length && !REGEX_META.has(pathPattern[end]!)) end++;
  const slash = pathPattern.slice(0, end).lastIndexOf('/');
  return slash < 0 ? '/' : pathPattern.slice(0, slash + 1);
}

/**
 * True for a relative file name made of non-empty segments, none `.` or `..`, without a backslash, a drive
 * letter, a control character or a leading `/` (S138, S139). Zip entries and request paths share this rule.
 */
export function isSafeEntryName(name: string): boolean {
  if (name === '' || name.length > MAX_ENTRY_NAME_CHARS) return false;
  if (CONTROL.test(name) || name.includes('\\') || /^[A-Za-z]:/.test(name)) return false;
  return name.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/**
 * The zip entry a request path names: the path after `prefix`, percent-decoded once, with `index.html` added
 * for a directory. The raw path is never used as a file path: the name only looks up the archive's table.
 * @throws {@link AgentError} `AGENT_ASSET_NOT_FOUND` (the path does not start with the prefix),
 *   `AGENT_ASSET_PATH_INVALID` (bad percent-encoding, or a name {@link isSafeEntryName} refuses).
 */
export function assetEntryNameOf(path: string, prefix: string): string {
  if (!path.startsWith(prefix)) {
    throw new AgentError('AGENT_ASSET_NOT_FOUND', 'no packaged asset at this path');
  }
  let name: string;
  try {
    name = decodeURIComponent(path.slice(prefix.length));
  } catch {
    throw new AgentError('AGENT_ASSET_PATH_INVALID', 'the asset path is not valid percent-encoding');
  }
  if (name === '' || name.endsWith('/')) name += INDEX_ENTRY;
  if (!isSafeEntryName(name)) {
    throw new AgentError('AGENT_ASSET_PATH_INVALID', 'the asset path is not a plain relative file name');
  }
  return name;
}
