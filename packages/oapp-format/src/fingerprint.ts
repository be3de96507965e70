import { encodeHex, sha256 } from '@org/envelope-crypto';
import { STANZA_HINT_BYTES } from './constants.js';

/** The 8-byte key hint: the first 8 bytes of SHA-256(public key) (SPEC.md §4.4). */
export function keyHint(publicKey: Uint8Array): Uint8Array {
  return sha256(publicKey).subarray(0, STANZA_HINT_BYTES);
}

/** A key's fingerprint: lowercase hex of {@link keyHint} (16 characters). Not secret. */
export function fingerprint(publicKey: Uint8Array): string {
  return encodeHex(keyHint(publicKey));
}
