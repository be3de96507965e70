/** Longest accepted workflow path (path plus query), in UTF-16 code units. Bounds regex time (SPEC.md §4). */
export const MAX_PATH_CHARS = 2048;
/** Longest accepted allowList `uriPattern`, in characters. */
export const MAX_PATTERN_CHARS = 1024;
/**
 * Upper bound on the backtracking cost estimate of one allowList pattern (SPEC.md §5.3). Two unbounded
 * quantifiers (`/.*\/oauth2/.*`) fit; three do not.
 */
export const MAX_PATTERN_COST = 5_000_000;
/** Most allowList entries per host. */
export const MAX_ALLOW_LIST_ENTRIES = 256;
/** Most fixed headers per host and most workflow headers per call. */
export const MAX_HEADERS = 64;
/** Longest header value, in characters. */
export const MAX_HEADER_VALUE_CHARS = 8192;
/** Longest host id, in characters. */
export const MAX_HOST_ID_CHARS = 256;
/** Longest base URL, in characters. */
export const MAX_BASE_URL_CHARS = 2048;
/** Most same-origin redirects followed by `sendOutbound` (docs/security-requirements.md A.2: at most 5). */
export const MAX_REDIRECTS = 5;
/** Timeout used when neither the call nor the host sets one, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
