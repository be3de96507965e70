/**
 * The arguments of host calls: their parser and the one way an argument is refused. Shared by the host ops (main
 * thread) and the worker's local ops (compression). Every argument a script gave a context call is refused with
 * `ENGINE_BAD_ARGUMENT` (SPEC.md §9), never a plain `TypeError`/`RangeError`: a host error reaches the script as
 * its text only, and without a code an app cannot tell a script's mistake from the engine's.
 */
import { EngineError } from './errors.js';

/** A context call refused an argument (`ENGINE_BAD_ARGUMENT`): `message` names the call, the argument and why. */
export function badArgument(message: string): EngineError {
  return new EngineError('ENGINE_BAD_ARGUMENT', message);
}

/**
 * What a script passed, for a message: the type, or the number itself; never a string's or object's content
 * (it may hold a secret, and messages carry no attacker bytes).
 */
export function kindOf(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return 'a string';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** `ENGINE_BAD_ARGUMENT: <what> must be <wanted>, got <kind>`. */
export function notA(what: string, wanted: string, got: unknown): EngineError {
  return badArgument(`${what} must be ${wanted}, got ${kindOf(got)}`);
}

/**
 * The argument list of a host call as the realm sends it: a JSON array text (the realm's own `JSON.stringify`).
 * @throws EngineError `ENGINE_BAD_ARGUMENT` `malformed host call` for anything but a JSON array.
 */
export function parseHostArgs(json: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v)) throw badArgument('malformed host call');
  return v;
}

/** `v`, a string. @throws EngineError `ENGINE_BAD_ARGUMENT`. */
export function stringArg(v: unknown, what: string): string {
  if (typeof v !== 'string') throw notA(what, 'a string', v);
  return v;
}

/** `v`, a finite number (never a string of digits). @throws EngineError `ENGINE_BAD_ARGUMENT`. */
export function numberArg(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw notA(what, 'a finite number', v);
  return v;
}

/** `v`, an integer from `min` to `max` (a number, never a string of digits). @throws EngineError `ENGINE_BAD_ARGUMENT`. */
export function integerArg(v: unknown, what: string, min: number, max = Infinity): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw notA(what, max === Infinity ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`, v);
  return v;
}
