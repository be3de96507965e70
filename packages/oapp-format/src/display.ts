// SPEC.md §6.4: how text from a package (or any other untrusted text: key ids, a license) is shown to a person.

/**
 * The code points the display rule escapes (SPEC.md §6.4), as inclusive ranges: C0 controls, DEL and C1 controls;
 * the Arabic letter mark; zero-width space, non-joiner and joiner and the left-to-right / right-to-left marks;
 * line and paragraph separators and the bidi embeddings and overrides; word joiner; bidi isolates; the byte
 * order mark (zero-width no-break space); and lone surrogates (never in a package, which is valid UTF-8).
 */
const ESCAPED: readonly (readonly [number, number])[] = [
  [0x0000, 0x001f],
  [0x007f, 0x009f],
  [0x061c, 0x061c],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2060],
  [0x2066, 0x2069],
  [0xd800, 0xdfff],
  [0xfeff, 0xfeff],
];

function isEscaped(cp: number): boolean {
  return ESCAPED.some(([lo, hi]) => cp >= lo && cp <= hi);
}

/**
 * The display form of an untrusted string (SPEC.md §6.4): in double quotes, with `\` shown as `\\`, `"` as `\"`
 * and every control, bidi, zero-width or separator code point as `\u{XXXX}` (uppercase hex, at least four
 * digits), so that no such character reaches a terminal or page and no two different strings look alike.
 * Everything else, non-ASCII letters included, is shown as it is.
 */
export function displayText(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (isEscaped(cp)) out += `\\u{${cp.toString(16).toUpperCase().padStart(4, '0')}}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * The display form of an untrusted JSON value (a license): compact JSON in which every string, member names
 * included, is in its {@link displayText} form. Numbers, `true`, `false` and `null` are written as JSON writes them.
 */
export function displayJson(value: unknown): string {
  if (typeof value === 'string') return displayText(value);
  if (Array.isArray(value)) return `[${value.map(displayJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${displayText(k)}:${displayJson(v)}`,
    );
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
