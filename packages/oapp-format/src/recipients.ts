import {
  BOX_NONCE_BYTES,
  boxBeforeNm,
  boxEasy,
  concatBytes,
  encodeHex,
  equalBytes,
  isCryptoError,
  randomBytes,
  secretboxOpenEasy,
  wipe,
} from '@org/envelope-crypto';
import { MAX_RECIPIENTS, STANZA_BYTES, STANZA_HINT_BYTES } from './constants.js';
import { OappError } from './errors.js';
import { keyHint } from './fingerprint.js';

/** One recipient stanza (SPEC.md §4.4). */
export interface Stanza {
  readonly hint: Uint8Array;
  readonly nonce: Uint8Array;
  /** crypto_box_easy(fileKey ‖ SHA-256(HEADER)) from the packager to the recipient: MAC (16) ‖ 64 bytes. */
  readonly box: Uint8Array;
}

const FILE_KEY_BYTES = 32;
const DIGEST_BYTES = 32;

/**
 * Seals the file key and the header digest for one recipient, authenticated by the packager.
 * @throws `CryptoError` `CRYPTO_WEAK_KEY`.
 */
export function sealStanza(
  fileKey: Uint8Array,
  headerDigest: Uint8Array,
  recipientPublicKey: Uint8Array,
  packagerSecretKey: Uint8Array,
  nonce: Uint8Array = randomBytes(BOX_NONCE_BYTES),
): Stanza {
  const inner = concatBytes(fileKey, headerDigest);
  try {
    const box = boxEasy(inner, nonce, recipientPublicKey, packagerSecretKey);
    return { hint: keyHint(recipientPublicKey).slice(), nonce, box };
  } finally {
    wipe(inner);
  }
}

/** Encodes the RECIPIENTS section value. */
export function encodeStanzas(stanzas: readonly Stanza[]): Uint8Array {
  const out = new Uint8Array(stanzas.length * STANZA_BYTES);
  stanzas.forEach((s, i) => {
    out.set(s.hint, i * STANZA_BYTES);
    out.set(s.nonce, i * STANZA_BYTES + STANZA_HINT_BYTES);
    out.set(s.box, i * STANZA_BYTES + STANZA_HINT_BYTES + BOX_NONCE_BYTES);
  });
  return out;
}

/**
 * SPEC.md §4.4: no two stanzas share a hint (one recipient per stanza) or a nonce. The writer never makes
 * either; a reader refuses both before any box is opened.
 */
function checkDistinct(stanzas: readonly Stanza[]): void {
  const hints = new Set<string>();
  const nonces = new Set<string>();
  stanzas.forEach((s, i) => {
    const hint = encodeHex(s.hint);
    if (hints.has(hint)) {
      throw new OappError(
        'FORMAT_DUPLICATE_RECIPIENT',
        `recipient stanza ${i} repeats the hint of an earlier stanza`,
        {
          details: { stanza: i },
        },
      );
    }
    const nonce = encodeHex(s.nonce);
    if (nonces.has(nonce)) {
      throw new OappError(
        'FORMAT_DUPLICATE_NONCE',
        `recipient stanza ${i} reuses the nonce of an earlier stanza`,
        {
          details: { stanza: i },
        },
      );
    }
    hints.add(hint);
    nonces.add(nonce);
  });
}

/**
 * Parses the RECIPIENTS section value: exactly `expected` stanzas of 112 bytes, distinct hints and nonces.
 * @throws {@link OappError} `FORMAT_BAD_RECIPIENTS`, `FORMAT_TOO_MANY_RECIPIENTS`, `FORMAT_DUPLICATE_RECIPIENT`,
 *   `FORMAT_DUPLICATE_NONCE`.
 */
export function decodeStanzas(value: Uint8Array, expected: number): Stanza[] {
  if (value.length % STANZA_BYTES !== 0) {
    throw new OappError(
      'FORMAT_BAD_RECIPIENTS',
      `RECIPIENTS is ${value.length} bytes, not a whole number of ${STANZA_BYTES}-byte stanzas`,
    );
  }
  const n = value.length / STANZA_BYTES;
  if (n > MAX_RECIPIENTS)
    throw new OappError(
      'FORMAT_TOO_MANY_RECIPIENTS',
      `${n} recipient stanzas, the limit is ${MAX_RECIPIENTS}`,
    );
  if (n !== expected) {
    throw new OappError(
      'FORMAT_BAD_RECIPIENTS',
      `RECIPIENTS holds ${n} stanzas but HEADER declares ${expected}`,
    );
  }
  const out: Stanza[] = [];
  for (let i = 0; i < n; i++) {
    const s = value.subarray(i * STANZA_BYTES, (i + 1) * STANZA_BYTES);
    out.push({ hint: s.subarray(0, 8), nonce: s.subarray(8, 32), box: s.subarray(32) });
  }
  checkDistinct(out);
  return out;
}

/**
 * Opens this recipient's stanza and checks the header digest (SPEC.md §6 step 13). Stanzas are
 * selected by hint, so no box is opened for other recipients.
 * @returns the 32-byte file key.
 * @throws {@link OappError} `CRYPTO_NO_MATCHING_RECIPIENT`, `CRYPTO_AUTH_FAILED`,
 *   `CRYPTO_HEADER_MISMATCH`, `CRYPTO_WEAK_KEY`.
 */
export function openStanza(
  stanzas: readonly Stanza[],
  headerDigest: Uint8Array,
  recipientPublicKey: Uint8Array,
  recipientSecretKey: Uint8Array,
  packagerPublicKey: Uint8Array,
): Uint8Array {
  const hint = keyHint(recipientPublicKey);
  const mine = stanzas.filter((s) => equalBytes(s.hint, hint));
  if (mine.length === 0) {
    throw new OappError(
      'CRYPTO_NO_MATCHING_RECIPIENT',
      'the package is not encrypted for this deployment (no recipient stanza for its key)',
    );
  }
  const k = beforeNm(packagerPublicKey, recipientSecretKey);
  try {
    for (const s of mine) {
      const inner = tryOpen(s, k);
      if (inner === undefined) continue;
      // SPEC.md §6 step 13: the box binds this exact HEADER; constant-time, lengths first.
      if (!equalBytes(inner.subarray(FILE_KEY_BYTES), headerDigest)) {
        wipe(inner);
        throw new OappError('CRYPTO_HEADER_MISMATCH', 'the recipient stanza was made for a different HEADER');
      }
      const fileKey = inner.slice(0, FILE_KEY_BYTES);
      wipe(inner);
      return fileKey;
    }
  } finally {
    wipe(k);
  }
  throw new OappError('CRYPTO_AUTH_FAILED', 'the recipient stanza does not authenticate');
}

function beforeNm(packagerPublicKey: Uint8Array, recipientSecretKey: Uint8Array): Uint8Array {
  try {
    return boxBeforeNm(packagerPublicKey, recipientSecretKey);
  } catch (cause) {
    if (isCryptoError(cause)) throw new OappError('CRYPTO_WEAK_KEY', 'weak packager key', { cause });
    throw cause;
  }
}

function tryOpen(s: Stanza, k: Uint8Array): Uint8Array | undefined {
  try {
    const inner = secretboxOpenEasy(s.box, s.nonce, k);
    return inner.length === FILE_KEY_BYTES + DIGEST_BYTES ? inner : undefined;
  } catch (err) {
    if (isCryptoError(err)) return undefined;
    throw err;
  }
}
