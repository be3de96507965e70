import { sodium, type Sodium } from './sodium.js';

/**
 * Which implementation to use: `sodium` (libsodium itself through sodium-native, the default when
 * it loads), `native` (node:crypto / OpenSSL, the default otherwise) or `js` (noble, the reference).
 */
export type Engine = 'sodium' | 'native' | 'js';

/** The default engine given what loaded: libsodium itself when available, else node:crypto. */
export function engineFor(mod: Sodium | undefined): 'sodium' | 'native' {
  return mod === undefined ? 'native' : 'sodium';
}

// ADR 0008: the one place the engine is chosen. Every operation takes an optional `engine` that defaults to
// this, and asks `sodiumFor` for libsodium; none looks at the loaded module itself.
const DEFAULT_ENGINE: Engine = engineFor(sodium);

/** The engine used when none is given. */
export function defaultEngine(): Engine {
  return DEFAULT_ENGINE;
}

/**
 * libsodium for `engine: 'sodium'`, `undefined` for the others (they run node:crypto or noble).
 * @throws Error when `'sodium'` is asked for where sodium-native did not load (a caller error).
 */
export function sodiumFor(engine: Engine): Sodium | undefined {
  if (engine !== 'sodium') return undefined;
  if (sodium === undefined) throw new Error("engine 'sodium': sodium-native could not be loaded");
  return sodium;
}
