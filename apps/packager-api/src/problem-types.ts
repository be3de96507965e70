/** Problem `type` URIs (ADR 0004): `urn:example:oapp:problem:` + the code, lower case, `_` → `-`. */
export const PROBLEM_TYPE_PREFIX = 'urn:example:oapp:problem:';

/** The stable problem type URI of a code. */
export function problemType(code: string): string {
  return PROBLEM_TYPE_PREFIX + code.toLowerCase().replaceAll('_', '-');
}

/** A short fixed title per code (RFC 9457 §3.1.3): the code in words, never request data. */
export function problemTitle(code: string): string {
  const words = code.toLowerCase().split('_');
  const text = words.slice(1).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
