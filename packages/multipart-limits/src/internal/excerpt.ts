/**
 * A short, escaped, printable excerpt of attacker-controlled text for an error message (docs/engineering.md §2):
 * at most 24 characters, quoted, every character outside printable ASCII written as `\uXXXX`.
 */
export function excerpt(text: string): string {
  const cut = text.length > 24 ? `${text.slice(0, 24)}...` : text;
  return JSON.stringify(cut).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
