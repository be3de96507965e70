import type { Engine } from '../src/index.js';

/**
 * Every engine, 'sodium' included unconditionally: sodium-native is a dependency and must load on
 * our machines, so where it does not, the 'sodium' cases fail (engine 'sodium' throws) instead of
 * being skipped.
 */
export const ENGINES: readonly Engine[] = ['sodium', 'native', 'js'];
