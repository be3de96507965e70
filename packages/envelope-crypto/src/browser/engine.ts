// The browser's engine choice for @org/envelope-crypto (replaces its src/internal/engine.ts in the browser build,
// ADR 0146): there is no libsodium addon and no node:crypto, so every operation runs the `js` engine (noble), the
// library's own reference implementation.
export type Engine = 'sodium' | 'native' | 'js';

export function engineFor(): 'js' {
  return 'js';
}

export function defaultEngine(): Engine {
  return 'js';
}

export function sodiumFor(engine: Engine): undefined {
  if (engine !== 'js') throw new Error(`engine '${engine}' is not in the browser build`);
  return undefined;
}
