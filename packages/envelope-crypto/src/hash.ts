import { createHash, hkdfSync } from 'node:crypto';
import { assertBytes } from './bytes.js';

/** SHA-256 of bytes (native; identical to noble and libsodium `crypto_hash_sha256`). */
export function sha256(data: Uint8Array): Uint8Array {
  assertBytes(data, undefined, 'data');
  return new Uint8Array(createHash('sha256').update(data).digest());
}

/** An incremental SHA-256, for streams. */
export interface Sha256Stream {
  update(data: Uint8Array): Sha256Stream;
  digest(): Uint8Array;
}

/** Starts an incremental SHA-256. */
export function createSha256(): Sha256Stream {
  const h = createHash('sha256');
  const api: Sha256Stream = {
    update(data) {
      h.update(data);
      return api;
    },
    digest: () => new Uint8Array(h.digest()),
  };
  return api;
}

/** HKDF-SHA-256 (RFC 5869): extract with `salt`, expand with `info` to `length` bytes. */
export function hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  assertBytes(ikm, undefined, 'ikm');
  return new Uint8Array(hkdfSync('sha256', ikm, salt, info, length));
}
