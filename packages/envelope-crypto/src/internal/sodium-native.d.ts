// Minimal types for the sodium-native functions this package uses (there is no @types/sodium-native).
// Every function writes into caller-provided typed arrays; failures throw or return false as noted.
declare module 'sodium-native' {
  type Bytes = ArrayBufferView;
  /** Throws when libsodium returns non-zero. */
  export function crypto_sign_seed_keypair(pk: Bytes, sk: Bytes, seed: Bytes): void;
  /** Throws when libsodium returns non-zero. */
  export function crypto_sign_detached(sig: Bytes, m: Bytes, sk: Bytes): void;
  export function crypto_sign_verify_detached(sig: Bytes, m: Bytes, pk: Bytes): boolean;
  /** Throws when libsodium returns -1 (small-order point or all-zero result). */
  export function crypto_scalarmult(q: Bytes, n: Bytes, p: Bytes): void;
  export function crypto_scalarmult_base(q: Bytes, n: Bytes): void;
  export function crypto_secretbox_easy(c: Bytes, m: Bytes, n: Bytes, k: Bytes): void;
  export function crypto_secretbox_open_easy(m: Bytes, c: Bytes, n: Bytes, k: Bytes): boolean;
  /** Throws when libsodium returns -1 (weak recipient key). */
  export function crypto_box_seal(c: Bytes, m: Bytes, pk: Bytes): void;
  export function crypto_box_seal_open(m: Bytes, c: Bytes, pk: Bytes, sk: Bytes): boolean;
  export function sodium_memzero(buf: Bytes): void;
  export function randombytes_buf(buf: Bytes): void;
}
