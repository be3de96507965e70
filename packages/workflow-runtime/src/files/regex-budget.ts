/**
 * Deploy-time guard for the regexes of file access (S137): `allowFileAccess[].patterns`, `fileWatcher.patterns`
 * and `fileWatcher.eventSplitter`. JavaScript regexes backtrack, so a pattern is walked once and refused when it
 * could take long: lookarounds and backreferences (they defeat the estimate), a quantified group that holds a
 * quantifier or an alternation (`(a+)+`, `(a|aa)*`), and a cost estimate over the budget. The walk also gives an
 * upper bound of the match length, which the splitter needs (ADR 0073). Same shape as host-policy's allowList
 * guard, with the bounds of file names and file content instead of URL paths.
 */

/** Longest pattern text accepted. */
export const MAX_FILE_PATTERN_CHARS = 1024;
/** Longest relative path a name pattern is matched against (`files(id)` refuses longer ones). */
export const MAX_MATCHED_PATH_CHARS = 4096;
/** Cost budget of a name pattern: two unbounded quantifiers fit, three do not. */
export const MAX_NAME_PATTERN_COST = 20_000_000;
/** Cost budget of an event splitter per position of the scanned text. */
export const MAX_SPLITTER_COST = 10_000;
/** Longest text an event splitter may match (it is re-scanned across reads by this much). */
export const MAX_SPLITTER_MATCH_CHARS = 1024;

/** What the walk found: a cost estimate, the longest match (Infinity when unbounded), and anchors. */
interface Shape {
  cost: number;
  maxLength: number;
}

class Refused extends Error {}

interface Cursor {
  readonly p: string;
  i: number;
  /** What an unbounded quantifier counts as in the cost. */
  readonly unbounded: number;
  anchors: boolean;
}

const QUANT_BRACE = /^\{(\d+)(,(\d*))?\}/;

function alternation(c: Cursor): Shape {
  const out = sequence(c);
  while (c.p[c.i] === '|') {
    c.i++;
    const next = sequence(c);
    out.cost += next.cost;
    out.maxLength = Math.max(out.maxLength, next.maxLength);
  }
  return out;
}

function sequence(c: Cursor): Shape {
  const out: Shape = { cost: 1, maxLength: 0 };
  while (c.i < c.p.length && c.p[c.i] !== '|' && c.p[c.i] !== ')') {
    const a = quantified(c, atom(c));
    out.cost *= a.cost;
    out.maxLength += a.maxLength;
  }
  return out;
}

function atom(c: Cursor): Shape {
  const ch = c.p[c.i];
  if (ch === '(') return group(c);
  if (ch === '[') {
    c.i++;
    if (c.p[c.i] === '^') c.i++;
    while (c.i < c.p.length && c.p[c.i] !== ']') c.i += c.p[c.i] === '\\' ? 2 : 1;
    if (c.i >= c.p.length) throw new Refused('unterminated character class');
    c.i++;
    return { cost: 1, maxLength: 1 };
  }
  if (ch === '\\') {
    const next = c.p[c.i + 1] ?? '';
    if (/[1-9]/.test(next) || (next === 'k' && c.p[c.i + 2] === '<'))
      throw new Refused('backreferences are not allowed');
    c.i += 2;
    if (next === 'b' || next === 'B') c.anchors = true;
    return { cost: 1, maxLength: next === 'b' || next === 'B' ? 0 : 1 };
  }
  c.i++;
  if (ch === '^' || ch === '$') {
    c.anchors = true;
    return { cost: 1, maxLength: 0 };
  }
  return { cost: 1, maxLength: 1 };
}

function group(c: Cursor): Shape {
  c.i++;
  const rest = c.p.slice(c.i, c.i + 3);
  if (rest.startsWith('?=') || rest.startsWith('?!') || rest === '?<=' || rest === '?<!')
    throw new Refused('lookaround assertions are not allowed');
  if (rest.startsWith('?:')) c.i += 2;
  else if (rest.startsWith('?<')) {
    const end = c.p.indexOf('>', c.i);
    if (end < 0) throw new Refused('unterminated group name');
    c.i = end + 1;
  }
  const inner = alternation(c);
  if (c.p[c.i] !== ')') throw new Refused('unbalanced parenthesis');
  c.i++;
  return inner;
}

function readQuantifier(c: Cursor): { min: number; max: number } | undefined {
  const ch = c.p[c.i];
  if (ch === '*' || ch === '+' || ch === '?') {
    c.i++;
    return { min: ch === '+' ? 1 : 0, max: ch === '?' ? 1 : Infinity };
  }
  if (ch !== '{') return undefined;
  const m = QUANT_BRACE.exec(c.p.slice(c.i));
  if (m === null) return undefined; // a literal `{` (no u flag)
  c.i += m[0].length;
  const min = Number(m[1]);
  if (m[2] === undefined) return { min, max: min };
  return { min, max: m[3] === '' ? Infinity : Number(m[3]) };
}

function quantified(c: Cursor, a: Shape): Shape {
  const q = readQuantifier(c);
  if (q === undefined) return a;
  if (c.p[c.i] === '?') c.i++; // lazy: same cost
  if (q.max <= 1) return { cost: a.cost + 1, maxLength: a.maxLength };
  if (a.cost > 1) throw new Refused('nested quantifier or quantified alternation');
  const reps = Math.min(q.max, c.unbounded);
  return { cost: reps + 1, maxLength: a.maxLength === 0 ? 0 : a.maxLength * q.max };
}

function walk(pattern: string, unbounded: number): Shape & { anchors: boolean } {
  if (pattern.length === 0) throw new Refused('is empty');
  if (pattern.length > MAX_FILE_PATTERN_CHARS)
    throw new Refused(`is longer than ${MAX_FILE_PATTERN_CHARS} characters`);
  try {
    new RegExp(pattern);
  } catch {
    throw new Refused('is not a valid regular expression');
  }
  const c: Cursor = { p: pattern, i: 0, unbounded, anchors: false };
  const shape = alternation(c);
  if (c.i !== pattern.length) throw new Refused('unbalanced parenthesis');
  return { ...shape, anchors: c.anchors };
}

/** The refusal reason of a name pattern, or undefined when it is accepted. Matched against whole relative paths. */
export function namePatternProblem(pattern: string): string | undefined {
  try {
    const s = walk(pattern, MAX_MATCHED_PATH_CHARS + 1);
    if (s.cost > MAX_NAME_PATTERN_COST)
      return 'may backtrack too much (use bounded quantifiers such as {1,64})';
    return undefined;
  } catch (err) {
    if (err instanceof Refused) return err.message;
    throw err;
  }
}

/**
 * The refusal reason of an event splitter, or undefined. A splitter matches at least one and at most
 * {@link MAX_SPLITTER_MATCH_CHARS} characters, has no unbounded quantifier, no anchor (`^`, `$`, `\b`: where a
 * read ends is not a boundary of the text) and a per-position cost within {@link MAX_SPLITTER_COST}.
 */
export function splitterProblem(pattern: string): string | undefined {
  try {
    const s = walk(pattern, Infinity);
    if (s.maxLength === Infinity)
      return 'uses an unbounded quantifier (*, +, {n,}); write a bound such as {1,64}';
    if (s.maxLength > MAX_SPLITTER_MATCH_CHARS)
      return `may match more than ${MAX_SPLITTER_MATCH_CHARS} characters`;
    if (s.anchors) return 'uses an anchor (^, $, \\b, \\B)';
    if (s.cost > MAX_SPLITTER_COST) return 'may backtrack too much';
    if (new RegExp(pattern).test('')) return 'matches the empty string';
    return undefined;
  } catch (err) {
    if (err instanceof Refused) return err.message;
    throw err;
  }
}
