// The browser's `node:crypto`, for the browser build of @org/envelope-crypto only (ADR 0146). It holds what the
// library calls outside its engine switch: SHA-256 and HKDF (noble), the CSPRNG (Web Crypto) and a constant-time
// comparison. Everything else is reached only on the `native` / `sodium` engines, which the browser build never
// selects (./engine.ts); calling it anyway is a build bug, reported as such.
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';

function unavailable(name: string): never {
  throw new Error(`crypto.${name} of Node is not in the browser build (the browser runs the js engine)`);
}

interface Hash {
  update(data: Uint8Array): Hash;
  digest(): Uint8Array;
}

export function createHash(algorithm: string): Hash {
  if (algorithm !== 'sha256') unavailable(`createHash('${algorithm}')`);
  const h = sha256.create();
  const api: Hash = {
    update(data) {
      h.update(data);
      return api;
    },
    digest: () => h.digest(),
  };
  return api;
}

export function hkdfSync(
  digest: string,
  ikm: Uint8Array,
  salt: Uint8Array,
  info: Uint8Array,
  length: number,
): ArrayBuffer {
  if (digest !== 'sha256') unavailable(`hkdfSync('${digest}')`);
  const out = hkdf(sha256, ikm, salt, info, length);
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
}

/** Web Crypto's CSPRNG, in the 64 KiB pieces getRandomValues accepts. */
export function randomFillSync(out: Uint8Array): Uint8Array {
  for (let off = 0; off < out.length; off += 65536) {
    globalThis.crypto.getRandomValues(out.subarray(off, Math.min(out.length, off + 65536)));
  }
  return out;
}

/** Constant time for equal lengths (the callers compare lengths first, as Node requires). */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) throw new RangeError('timingSafeEqual: inputs differ in length');
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

export const sign = (): never => unavailable('sign');
export const verify = (): never => unavailable('verify');
export const createCipheriv = (): never => unavailable('createCipheriv');
export const createDecipheriv = (): never => unavailable('createDecipheriv');
export const diffieHellman = (): never => unavailable('diffieHellman');
export const createPublicKey = (): never => unavailable('createPublicKey');
export const createPrivateKey = (): never => unavailable('createPrivateKey');
