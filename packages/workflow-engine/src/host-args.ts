/**
 * The argument list of a host call as the realm sends it: a JSON array text (the realm's own `JSON.stringify`).
 * Shared by the host ops (main thread) and the worker's local ops (compression).
 * @throws TypeError `malformed host call` for anything but a JSON array.
 */
export function parseHostArgs(json: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v)) throw new TypeError('malformed host call');
  return v;
}
