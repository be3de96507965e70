/**
 * The helper factory: entry of the helper script `dist/sandbox/util.global.js` (ADR 0050), which the worker hands
 * to the realm as the string `__utilSource` and the prelude compiles with indirect eval on a run's first use of a
 * helper. The script evaluates to `createUtil` (the `completion` export); the prelude calls it once per run with
 * that run's `env`, so `bytes()`, `crypto()` and doc builders are never shared between runs.
 */
import { createExtras } from './extras.js';
import type { UtilEnv } from './types.js';
import {
  concat,
  crc32,
  deepMerge,
  fromBase64,
  fromHex,
  memoryReader,
  serialize,
  toBase64,
  toBytes,
  toHex,
  unsupported,
  utf8Decode,
  utf8Encode,
  validate,
} from './util.js';

export function createUtil(env: UtilEnv) {
  const { bytes, crypto, makeDoc } = createExtras(env);
  return {
    bytes,
    crypto,
    makeDoc,
    validate,
    unsupported,
    utf8Encode,
    utf8Decode,
    toBytes,
    toHex,
    fromHex,
    toBase64,
    fromBase64,
    crc32,
    serialize,
    deepMerge,
    concat,
    memoryReader,
  };
}

export type UtilFactory = typeof createUtil;
export type Util = ReturnType<UtilFactory>;

/** The value the helper script evaluates to. */
export const completion = createUtil;
