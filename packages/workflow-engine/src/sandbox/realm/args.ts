/**
 * Coded errors inside the realm, and the checks of a script's arguments to context calls (SPEC.md §1, §9). Every
 * argument a context call refuses is `ENGINE_BAD_ARGUMENT`, never a plain `TypeError`/`RangeError`; a number is
 * never taken from a string (`Number('16')`), since JSON would hand the host the converted value and it could
 * no longer refuse it. The host checks every argument again (`host-args.ts`, the same code and wording).
 * Bundled into both realm scripts (the prelude and the helper factory), which share no values at run time.
 */

/** A coded error as scripts see them: message `CODE: message`, `code` = CODE (SPEC.md §1). */
export function codedError(code: string, message: string): Error {
  const e = new Error(code + ': ' + message) as Error & { code?: string };
  e.code = code;
  return e;
}

/** A context call refused an argument: `message` names the call, the argument and why. */
export function badArgument(message: string): Error {
  return codedError('ENGINE_BAD_ARGUMENT', message);
}

/** What a script passed, for a message: the type, or the number itself; never a string's or object's content. */
export function kindOf(v: unknown): string {
  if (v === null || v === undefined || typeof v === 'number') return String(v);
  if (typeof v === 'string') return 'a string';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : 'a ' + typeof v;
}

/** `ENGINE_BAD_ARGUMENT: <what> must be <wanted>, got <kind>`. */
export function notA(what: string, wanted: string, got: unknown): Error {
  return badArgument(what + ' must be ' + wanted + ', got ' + kindOf(got));
}

/** `v` as a finite number; a string of digits is refused. */
export function numberArg(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw notA(what, 'a finite number', v);
  return v;
}

/** `v` as an integer from `min` to `max`; the host checks a bound it owns (a limit of its own) itself. */
export function integerArg(v: unknown, what: string, min = -Infinity, max = Infinity): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw notA(
      what,
      'an integer' +
        (max !== Infinity ? ' from ' + min + ' to ' + max : min !== -Infinity ? ' ≥ ' + min : ''),
      v,
    );
  return v;
}

/**
 * `v` as text: the context API's documented `String(x)` conversion (SPEC.md), refusing what has no string form
 * (a symbol, an object without `toString`) with a coded error instead of the engine's `TypeError`.
 */
export function textArg(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'symbol') throw notA(what, 'a string', v);
  try {
    return String(v);
  } catch (e) {
    if (e instanceof TypeError) throw notA(what, 'a string', v);
    throw e;
  }
}

/**
 * `v` as the text a call stores or sends: null for null or undefined, objects as JSON, other values as
 * {@link textArg}. An object JSON cannot encode (a cycle, a BigInt) is refused.
 */
export function jsonText(v: unknown, what: string): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'object') return textArg(v, what);
  try {
    return JSON.stringify(v);
  } catch (e) {
    if (e instanceof TypeError) throw notA(what, 'a value JSON can encode', v);
    throw e;
  }
}

/** `v` when it is a plain object (not an array), undefined for null or undefined. */
export function optionalObject(v: unknown, what: string): Record<string, unknown> | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw notA(what, 'an object', v);
  return v as Record<string, unknown>;
}
