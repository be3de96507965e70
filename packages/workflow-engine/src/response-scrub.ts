import { EngineError } from './errors.js';
import type { SecretSet } from './redact.js';
import type { OutboundResponse } from './types.js';

/** BOM kept: a scrubbed text body is re-encoded byte for byte apart from the markers. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const utf8Encoder = new TextEncoder();

function scrubHeaders(
  secrets: SecretSet,
  headers: Record<string, string[]>,
): { headers: Record<string, string[]>; changed: boolean } {
  const out = Object.create(null) as Record<string, string[]>;
  let changed = false;
  for (const [name, values] of Object.entries(headers)) {
    const clean = secrets.scrub(name);
    const cleanValues = values.map((v) => secrets.scrub(v));
    if (clean !== name || cleanValues.some((v, i) => v !== values[i])) changed = true;
    out[clean] = [...(out[clean] ?? []), ...cleanValues];
  }
  return { headers: out, changed };
}

/**
 * The body with every registered secret replaced, or the same bytes when none occurs. A body that holds a
 * secret but is not valid UTF-8 is refused rather than rewritten: replacing bytes inside a binary format would
 * hand the script silently corrupted data (ADR 0068).
 */
function scrubBody(secrets: SecretSet, body: Uint8Array, hostId: string): Uint8Array | undefined {
  // A secret is a string; its UTF-8 bytes decode to itself even between invalid sequences, so the lenient
  // reading finds every occurrence the strict one would.
  const text = lenientUtf8.decode(body);
  const clean = secrets.scrub(text);
  if (clean === text) return undefined;
  try {
    strictUtf8.decode(body);
  } catch {
    throw new EngineError(
      'ENGINE_SECRET_IN_RESPONSE',
      `host ${JSON.stringify(hostId.slice(0, 200))} answered with a registered secret in a body that is not UTF-8 text; the response is refused`,
    );
  }
  return utf8Encoder.encode(clean);
}

/**
 * The response of a main call as an ordinary processor may see it (ADR 0068): an upstream that echoes a
 * credential (a header value an authentication context set, restricted data, a cached authentication property)
 * gets it back as `<REDACTED>`, in the body and in header names and values. `content-length`, when present,
 * is set to the scrubbed body's length. The response is returned unchanged (same object) when nothing occurs.
 *
 * @throws EngineError `ENGINE_SECRET_IN_RESPONSE` when a body that is not valid UTF-8 holds a secret.
 */
export function scrubResponse(secrets: SecretSet, res: OutboundResponse, hostId: string): OutboundResponse {
  const body = scrubBody(secrets, res.body, hostId);
  const scrubbed = scrubHeaders(secrets, res.headers);
  if (body === undefined && !scrubbed.changed) return res;
  const headers = scrubbed.headers;
  if (body !== undefined) {
    for (const name of Object.keys(headers))
      if (name.toLowerCase() === 'content-length') headers[name] = [String(body.byteLength)];
  }
  return { status: res.status, headers, body: body ?? res.body };
}
