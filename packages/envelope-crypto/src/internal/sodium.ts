import { createRequire } from 'node:module';
import type * as SodiumNative from 'sodium-native';

/** The sodium-native functions this package calls (libsodium itself, through a prebuilt addon). */
export type Sodium = typeof SodiumNative;

const REQUIRED = [
  'crypto_sign_seed_keypair',
  'crypto_sign_detached',
  'crypto_sign_verify_detached',
  'crypto_scalarmult',
  'crypto_scalarmult_base',
  'crypto_secretbox_easy',
  'crypto_secretbox_open_easy',
  'crypto_box_seal',
  'crypto_box_seal_open',
  'sodium_memzero',
  'randombytes_buf',
] as const;

/**
 * Runs `loader` once and returns the module if it loaded and has every function we call; any
 * failure (package missing, prebuilt binary that does not load on this platform, an unexpected
 * export shape) gives `undefined`, and the callers fall back to node:crypto / noble.
 */
export function loadSodium(loader: () => unknown): Sodium | undefined {
  try {
    const mod = loader() as Record<string, unknown> | null | undefined;
    if (mod === null || typeof mod !== 'object') return undefined;
    for (const name of REQUIRED) if (typeof mod[name] !== 'function') return undefined;
    return mod as unknown as Sodium;
  } catch {
    return undefined;
  }
}

/** sodium-native, or `undefined` when it cannot be loaded here. CommonJS, hence `createRequire`. */
export const sodium: Sodium | undefined = loadSodium(() => createRequire(import.meta.url)('sodium-native'));
