import type { ConfigWhere } from './internal/config-error.js';
import { configError } from './internal/config-error.js';
import { estimatePatternCost, PatternRejected } from './internal/regex-guard.js';
import { MAX_PATTERN_CHARS, MAX_PATTERN_COST } from './limits.js';
import type { HttpMethod } from './methods.js';
import { normalizeMethod } from './methods.js';

/** One allowList entry as configured: a method and a regex over the whole normalised path. */
export interface AllowListEntry {
  readonly method: string;
  readonly uriPattern: string;
}

/** Something that tests a whole pathname: one combined anchored regex, or a loop over several. */
export interface PathMatcher {
  test(pathname: string): boolean;
}

/** A compiled allowList: per upper-case method, and over all entries (to tell a wrong method from a wrong path). */
export interface CompiledAllowList {
  readonly byMethod: ReadonlyMap<HttpMethod, PathMatcher>;
  readonly all: PathMatcher;
}

/** Outcome of matching a method and path against a compiled allowList. */
export type AllowListOutcome = 'allowed' | 'method' | 'path';

/**
 * Checks one `uriPattern`: a valid regex on its own (so a `)` in it can never close the anchoring group early),
 * within the length cap, and within the backtracking budget (SPEC.md §5.3). Returns the pattern.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID when the pattern is too long, invalid or too costly
 */
export function checkPattern(pattern: unknown, where: ConfigWhere, field: string): string {
  const fail = (why: string, cause?: unknown): never =>
    configError(where, field, why, 'allow-list-pattern', cause);
  if (typeof pattern !== 'string' || pattern.length === 0) return fail('must be a non-empty string');
  if (pattern.length > MAX_PATTERN_CHARS) return fail(`is longer than ${MAX_PATTERN_CHARS} characters`);
  try {
    new RegExp(pattern);
  } catch (err) {
    return fail('is not a valid regular expression', err);
  }
  let cost: number;
  try {
    cost = estimatePatternCost(pattern);
  } catch (err) {
    if (err instanceof PatternRejected) return fail(`is refused: ${err.message}`);
    throw err;
  }
  if (cost > MAX_PATTERN_COST) return fail('may backtrack too much (use bounded quantifiers such as {1,64})');
  return pattern;
}

/**
 * Compiles the allowList of one host.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID naming the entry index and field
 */
export function compileAllowList(entries: readonly AllowListEntry[], where: ConfigWhere): CompiledAllowList {
  const byMethod = new Map<HttpMethod, string[]>();
  const all: string[] = [];
  entries.forEach((entry, i) => {
    const method = normalizeMethod(entry.method);
    if (method === undefined) {
      return configError(where, `allowList[${i}].method`, 'is not a supported method', 'allow-list-method');
    }
    const pattern = checkPattern(entry.uriPattern, where, `allowList[${i}].uriPattern`);
    byMethod.set(method, [...(byMethod.get(method) ?? []), pattern]);
    all.push(pattern);
  });
  const matchers = new Map<HttpMethod, PathMatcher>();
  for (const [method, patterns] of byMethod) matchers.set(method, combine(patterns));
  return { byMethod: matchers, all: combine(all) };
}

/**
 * One regex `^(?:(?:p1)|(?:p2)|…)$` for several patterns (each is a valid regex on its own, so each stays inside
 * its group); if the combination does not compile (the same group name twice), a loop over `^(?:p)$` regexes.
 */
function combine(patterns: readonly string[]): PathMatcher {
  try {
    return new RegExp(`^(?:${patterns.map((p) => `(?:${p})`).join('|')})$`);
  } catch {
    const list = patterns.map((p) => new RegExp(`^(?:${p})$`));
    return { test: (pathname) => list.some((re) => re.test(pathname)) };
  }
}

/**
 * Matches an upper-case method and a full pathname (query excluded) against the allowList. Returns `method`
 * when the method has no entry at all, or when no entry of this method matches but an entry of another method
 * does; `path` when the method has entries and no entry of any method matches the path.
 *
 * @throws never
 */
export function matchAllowList(
  list: CompiledAllowList,
  method: HttpMethod,
  pathname: string,
): AllowListOutcome {
  const forMethod = list.byMethod.get(method);
  if (forMethod === undefined) return 'method';
  if (forMethod.test(pathname)) return 'allowed';
  return list.all.test(pathname) ? 'method' : 'path';
}
