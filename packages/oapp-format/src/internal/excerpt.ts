/** Characters of a value shown in a message; a package id holds up to 256 bytes, a policy's any number. */
export const MAX_EXCERPT_CHARS = 64;

/**
 * A short, escaped, printable excerpt of a value for an error message (a HEADER field is unauthenticated when it
 * is compared): JSON-quoted, every character outside printable ASCII written as `\uXXXX` (so a control
 * character, a bidi override, or an NFD form beside the NFC one the policy names, stays visible), and cut after
 * `max` characters with `...` and the full length after the closing quote.
 */
export function excerpt(text: string, max: number = MAX_EXCERPT_CHARS): string {
  const quoted = JSON.stringify(text.slice(0, max)).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return text.length > max ? `${quoted}... (${text.length} characters)` : quoted;
}
