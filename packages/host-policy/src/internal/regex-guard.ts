import { MAX_PATH_CHARS } from '../limits.js';

/**
 * Static guard against catastrophic backtracking in allowList patterns (SPEC.md §5.3).
 *
 * The pattern is walked once and a cost is estimated: a sequence multiplies the costs of its atoms, an
 * alternation adds the costs of its branches, and a quantifier with at most M repetitions multiplies by M + 1
 * (unbounded counts as MAX_PATH_CHARS, since no path is longer). A quantified group that itself contains a
 * quantifier or an alternation (`(a+)+`, `(a|aa)*`) is refused outright. Lookarounds and backreferences are
 * refused: path patterns need neither, and both defeat the estimate.
 */
export class PatternRejected extends Error {}

interface Cursor {
  readonly p: string;
  i: number;
}

const QUANT_BRACE = /^\{(\d+)(,(\d*))?\}/;

/** Returns the cost estimate of `pattern`, or throws PatternRejected with a lowercase reason. */
export function estimatePatternCost(pattern: string): number {
  const c: Cursor = { p: pattern, i: 0 };
  const cost = alternation(c);
  if (c.i !== pattern.length) throw new PatternRejected('unbalanced parenthesis');
  return cost;
}

function alternation(c: Cursor): number {
  let total = sequence(c);
  while (c.p[c.i] === '|') {
    c.i++;
    total += sequence(c);
  }
  return total;
}

function sequence(c: Cursor): number {
  let cost = 1;
  while (c.i < c.p.length && c.p[c.i] !== '|' && c.p[c.i] !== ')') {
    const atomCost = atom(c);
    cost *= quantified(c, atomCost);
  }
  return cost;
}

function atom(c: Cursor): number {
  const ch = c.p[c.i];
  if (ch === '(') return group(c);
  if (ch === '[') return charClass(c);
  if (ch === '\\') return escape(c);
  c.i++;
  return 1;
}

function group(c: Cursor): number {
  c.i++;
  const rest = c.p.slice(c.i, c.i + 3);
  if (rest.startsWith('?=') || rest.startsWith('?!') || rest === '?<=' || rest === '?<!') {
    throw new PatternRejected('lookaround assertions are not allowed');
  }
  if (rest.startsWith('?:')) c.i += 2;
  else if (rest.startsWith('?<')) {
    const end = c.p.indexOf('>', c.i);
    if (end < 0) throw new PatternRejected('unterminated group name');
    c.i = end + 1;
  }
  const inner = alternation(c);
  if (c.p[c.i] !== ')') throw new PatternRejected('unbalanced parenthesis');
  c.i++;
  return inner;
}

function charClass(c: Cursor): number {
  c.i++;
  if (c.p[c.i] === '^') c.i++;
  while (c.i < c.p.length && c.p[c.i] !== ']') c.i += c.p[c.i] === '\\' ? 2 : 1;
  if (c.i >= c.p.length) throw new PatternRejected('unterminated character class');
  c.i++;
  return 1;
}

function escape(c: Cursor): number {
  const next = c.p[c.i + 1] ?? '';
  if (/[1-9]/.test(next) || (next === 'k' && c.p[c.i + 2] === '<')) {
    throw new PatternRejected('backreferences are not allowed');
  }
  c.i += 2;
  return 1;
}

/** Reads an optional quantifier after an atom of cost `atomCost` and returns the combined cost. */
function quantified(c: Cursor, atomCost: number): number {
  const max = readQuantifier(c);
  if (max === undefined) return atomCost;
  if (c.p[c.i] === '?') c.i++; // lazy form: same cost
  if (max <= 1) return atomCost + 1;
  if (atomCost > 1) throw new PatternRejected('nested quantifier or quantified alternation');
  return Math.min(max, MAX_PATH_CHARS) + 1;
}

function readQuantifier(c: Cursor): number | undefined {
  const ch = c.p[c.i];
  if (ch === '*' || ch === '+') {
    c.i++;
    return Infinity;
  }
  if (ch === '?') {
    c.i++;
    return 1;
  }
  if (ch !== '{') return undefined;
  const m = QUANT_BRACE.exec(c.p.slice(c.i));
  if (m === null) return undefined; // a literal `{` in a pattern without the u flag
  c.i += m[0].length;
  if (m[2] === undefined) return Number(m[1]);
  return m[3] === '' ? Infinity : Number(m[3]);
}
