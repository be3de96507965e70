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

/** A compiled allowList: anchored regexes grouped by upper-case method. */
export interface CompiledAllowList {
  readonly byMethod: ReadonlyMap<HttpMethod, readonly RegExp[]>;
  readonly all: readonly RegExp[];
}

/** Outcome of matching a method and path against a compiled allowList. */
export type AllowListOutcome = 'allowed' | 'method' | 'path';

/**
 * Compiles one `uriPattern` into `^(?:pattern)$`. The pattern must be a valid regex on its own, so a `)` in it
 * can never close the anchoring group early.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID when the pattern is too long, invalid or too costly
 */
export function compilePattern(pattern: unknown, where: ConfigWhere, field: string): RegExp {
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
  return new RegExp(`^(?:${pattern})$`);
}

/**
 * Compiles the allowList of one host.
 *
 * @throws PolicyError POLICY_CONFIG_INVALID naming the entry index and field
 */
export function compileAllowList(entries: readonly AllowListEntry[], where: ConfigWhere): CompiledAllowList {
  const byMethod = new Map<HttpMethod, RegExp[]>();
  const all: RegExp[] = [];
  entries.forEach((entry, i) => {
    const method = normalizeMethod(entry.method);
    if (method === undefined) {
      return configError(where, `allowList[${i}].method`, 'is not a supported method', 'allow-list-method');
    }
    const re = compilePattern(entry.uriPattern, where, `allowList[${i}].uriPattern`);
    const list = byMethod.get(method) ?? [];
    list.push(re);
    byMethod.set(method, list);
    all.push(re);
  });
  return { byMethod, all };
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
  if (forMethod !== undefined) {
    for (const re of forMethod) if (re.test(pathname)) return 'allowed';
    for (const re of list.all) if (!forMethod.includes(re) && re.test(pathname)) return 'method';
    return 'path';
  }
  return 'method';
}
