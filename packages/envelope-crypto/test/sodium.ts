// The libsodium oracle (libsodium-wrappers, the reference C library compiled to wasm).
import sodiumModule from 'libsodium-wrappers';

export async function loadSodium(): Promise<typeof sodiumModule> {
  await sodiumModule.ready;
  return sodiumModule;
}

/** Message lengths that cross every internal block boundary (64-byte Salsa/ChaCha blocks, 16-byte Poly1305). */
export const LENGTHS = [
  0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 4095, 4096, 4097, 65_535,
  65_536, 100_000,
];

/** Deterministic pseudo-random bytes (for messages; never for keys in production). */
export function fill(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** True when a libsodium call fails (libsodium-wrappers throws where the C function returns -1). */
export function sodiumRefuses(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch {
    return true;
  }
}
