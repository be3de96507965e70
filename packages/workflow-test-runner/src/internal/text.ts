/** Describes a value by type and size, never by content (messages must not echo secrets). */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (typeof v === 'string') return `string of length ${v.length}`;
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** A short, escaped rendering of a name or path for messages (names are not secret, but may be hostile). */
export function quoteName(name: string): string {
  const cut = name.length > 96 ? `${name.slice(0, 96)}…` : name;
  return JSON.stringify(cut);
}

/** RFC 6901 pointer for a list of segments. */
export function toPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes as UTF-8 text, or null when they are not valid UTF-8 (never a lossy decode). */
export function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** True when the two byte arrays hold the same bytes. Not constant time: test data, not secrets. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
