/**
 * Names docs/compatibility.md must mention, read from the files that define them (issue 28 §3): the context calls of
 * the engine's SPEC.md, and string lists declared in TypeScript sources. The sources are read as text: this package
 * has no dependencies and runs without a build.
 */

/** Names in SPEC.md call tables that are not context calls (JavaScript built-ins and the engine's own API). */
const NOT_CONTEXT_CALLS = new Set(['Error', 'String', 'runStep']);

/** The text of every inline code span of a Markdown document. */
export function codeSpans(markdown: string): string[] {
  return [...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
}

/**
 * Every call name in the code spans of the engine SPEC.md's sections 3 to 7 (body, headers, step to step,
 * authentication, metrics, bytes, crypto, doc, persistence, files): `getBody()`, `.setIfLastest(k, ts)`,
 * `console.log/info(...)`, the members of `{ get(k), put(k, v) }`.
 */
export function specCallNames(spec: string): string[] {
  const start = spec.indexOf('\n## 3.');
  const end = spec.indexOf('\n## 8.');
  if (start < 0 || end < start) throw new Error('SPEC.md: sections 3 to 7 not found');
  const names = new Set<string>();
  for (const span of codeSpans(spec.slice(start, end))) {
    for (const m of span.matchAll(/([A-Za-z_$][\w$]*(?:\/[A-Za-z_$][\w$]*)*)\(/g)) {
      for (const name of m[1]!.split('/')) if (!NOT_CONTEXT_CALLS.has(name)) names.add(name);
    }
  }
  return [...names].sort();
}

/**
 * The string values of `key` (or, without a key, every string literal) in the array literal assigned to the exported
 * constant `name`. Throws when the constant is missing, or when the array holds something but no such value, so a
 * change of shape fails instead of reading as an empty list.
 */
export function declaredStrings(source: string, name: string, key?: string): string[] {
  const at = source.indexOf(`export const ${name}`);
  if (at < 0) throw new Error(`${name} not found`);
  const open = source.indexOf('[', source.indexOf('=', at));
  if (source.startsWith('[]', open)) return []; // `= []` or `Object.freeze([])`
  const close = source.indexOf('\n]', open);
  if (open < 0 || close < 0) throw new Error(`${name}: the array literal was not found`);
  const body = source.slice(open + 1, close).replace(/^\s*\/\/.*$/gm, '');
  const pattern = key === undefined ? /'([^'\n]*)'/g : new RegExp(`\\b${key}:\\s*'([^'\\n]*)'`, 'g');
  const values = [...body.matchAll(pattern)].map((m) => m[1]!);
  if (values.length === 0 && body.trim() !== '')
    throw new Error(`${name}: no ${key ?? 'string'} values found`);
  return values;
}

/** The names of `wanted` that no code span of the document mentions (as a whole span, a word or a path in one). */
export function missingFrom(markdown: string, wanted: readonly string[]): string[] {
  const spans = codeSpans(markdown);
  const words = new Set(spans.flatMap((s) => s.split(/[^\w$.-]+/)).flatMap((w) => [w, ...w.split('.')]));
  return wanted.filter((w) => !words.has(w) && !spans.some((s) => s === w));
}
