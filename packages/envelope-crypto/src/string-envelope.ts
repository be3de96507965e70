import { assertBytes, concatBytes, randomBytes } from './bytes.js';
import { BOX_MAC_BYTES, BOX_NONCE_BYTES, boxEasy, boxOpenEasy } from './box.js';
import { decodeBase64, decodeHex, encodeBase64 } from './encoding.js';
import { CryptoError, isCryptoError } from './errors.js';
import { assertStrongPublicKey, expectKey, type Key } from './keys.js';

// The `-2/` encrypted string (oapp-format SPEC.md §9): "-2/" ‖ Base64(nonce (24) ‖
// crypto_box_easy(plaintext, nonce, recipient public key, sender secret key)). Exactly what
// PyNaCl's Box(recipientSk, senderPk).decrypt(nonce ‖ box) opens.

/** The version prefix of encrypted strings. */
export const STRING_PREFIX = '-2/';
/** The largest plaintext an encrypted string may carry, in bytes. */
export const MAX_STRING_PLAINTEXT_BYTES = 65_536;
const MIN_ENVELOPE_BYTES = BOX_NONCE_BYTES + BOX_MAC_BYTES;
const MAX_ENVELOPE_BYTES = MIN_ENVELOPE_BYTES + MAX_STRING_PLAINTEXT_BYTES;
const MAX_TEXT_LENGTH = STRING_PREFIX.length + Math.ceil(MAX_ENVELOPE_BYTES / 3) * 4;

/** One `<sender public key hex>/<decoder secret key hex>` candidate. */
export interface KeyTuple {
  readonly senderPublicKey: Uint8Array;
  readonly recipientSecretKey: Uint8Array;
}

/**
 * Encrypts a string for exactly one recipient, authenticated by the sender (packager identity).
 * @param plaintext - bytes (UTF-8 of the string) of at most {@link MAX_STRING_PLAINTEXT_BYTES}.
 * @throws {@link CryptoError} `CRYPTO_TOO_LARGE`, `CRYPTO_WRONG_KEY_PURPOSE`, `CRYPTO_WRONG_KEY_TYPE`, `CRYPTO_WEAK_KEY`.
 */
export function encryptString(plaintext: Uint8Array, recipientPublicKey: Key, senderSecretKey: Key): string {
  assertBytes(plaintext, undefined, 'plaintext');
  expectKey(recipientPublicKey, 'authenticated', 'public', 'encryptionKeys');
  expectKey(senderSecretKey, 'authenticated', 'secret', 'packagerIdentityPrivateKey');
  if (plaintext.length > MAX_STRING_PLAINTEXT_BYTES) {
    throw new CryptoError(
      'CRYPTO_TOO_LARGE',
      `string plaintext is ${plaintext.length} bytes, the limit is ${MAX_STRING_PLAINTEXT_BYTES}`,
    );
  }
  const nonce = randomBytes(BOX_NONCE_BYTES);
  const box = boxEasy(plaintext, nonce, recipientPublicKey.bytes, senderSecretKey.bytes);
  return STRING_PREFIX + encodeBase64(concatBytes(nonce, box));
}

/**
 * Parses the envelope of an encrypted string without decrypting it.
 * @throws {@link CryptoError} `CRYPTO_BAD_PREFIX`, `CRYPTO_TOO_LARGE`, `CRYPTO_BAD_BASE64`, `CRYPTO_TRUNCATED`.
 */
export function parseEncryptedString(text: string): { nonce: Uint8Array; box: Uint8Array } {
  if (typeof text !== 'string' || !text.startsWith(STRING_PREFIX)) {
    throw new CryptoError('CRYPTO_BAD_PREFIX', 'encrypted string does not start with "-2/"');
  }
  if (text.length > MAX_TEXT_LENGTH)
    throw new CryptoError('CRYPTO_TOO_LARGE', 'encrypted string is longer than the limit');
  const raw = decodeBase64(text.slice(STRING_PREFIX.length), 'encrypted string');
  if (raw.length < MIN_ENVELOPE_BYTES) {
    throw new CryptoError(
      'CRYPTO_TRUNCATED',
      `encrypted string has ${raw.length} bytes, fewer than nonce and tag (${MIN_ENVELOPE_BYTES})`,
    );
  }
  return { nonce: raw.subarray(0, BOX_NONCE_BYTES), box: raw.subarray(BOX_NONCE_BYTES) };
}

/** True when a value looks like an encrypted string (prefix only; nothing is decoded). */
export function isEncryptedString(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(STRING_PREFIX);
}

/**
 * Decrypts an encrypted string with the first candidate that opens it (candidates are tried in
 * order, every one of them, so that timing does not depend on which key matched).
 * @throws {@link CryptoError} `CRYPTO_BAD_PREFIX`, `CRYPTO_TOO_LARGE`, `CRYPTO_BAD_BASE64`,
 *   `CRYPTO_TRUNCATED`, `CRYPTO_NO_MATCHING_KEY` (no candidates), `CRYPTO_AUTH_FAILED` (none opened it).
 */
export function decryptString(text: string, candidates: readonly KeyTuple[]): Uint8Array {
  const { nonce, box } = parseEncryptedString(text);
  if (candidates.length === 0)
    throw new CryptoError('CRYPTO_NO_MATCHING_KEY', 'no decryption key is configured for encrypted strings');
  let result: Uint8Array | undefined;
  for (const c of candidates) {
    const opened = tryOpen(box, nonce, c);
    if (result === undefined) result = opened;
    else opened?.fill(0);
  }
  if (result === undefined)
    throw new CryptoError('CRYPTO_AUTH_FAILED', 'no configured key opens the encrypted string');
  return result;
}

function tryOpen(box: Uint8Array, nonce: Uint8Array, c: KeyTuple): Uint8Array | undefined {
  try {
    return boxOpenEasy(box, nonce, c.senderPublicKey, c.recipientSecretKey);
  } catch (err) {
    if (isCryptoError(err)) return undefined;
    throw err;
  }
}

/**
 * Parses one `<sender public key hex>/<decoder secret key hex>` tuple (as in
 * `AGENT_BOOTSTRAP_SECRETKEY`). Messages name the position, never key material.
 * @param position - 1-based position for messages (`entry 2`).
 * @throws {@link CryptoError} `CRYPTO_BAD_KEY_TUPLE`.
 */
export function parseKeyTuple(text: string, position = 1): KeyTuple {
  const where = `entry ${position}`;
  const fail = (why: string, cause?: unknown): never => {
    throw new CryptoError('CRYPTO_BAD_KEY_TUPLE', `${where}: ${why}`, { details: { position }, cause });
  };
  const parts = text.trim().split('/');
  if (parts.length !== 2)
    return fail('expected <sender public key hex>/<secret key hex> with exactly one "/"');
  const [pubHex = '', secHex = ''] = parts;
  let senderPublicKey: Uint8Array;
  let recipientSecretKey: Uint8Array;
  try {
    senderPublicKey = decodeHex(pubHex, 32, 'sender public key');
    recipientSecretKey = decodeHex(secHex, 32, 'secret key');
    assertStrongPublicKey('authenticated', senderPublicKey);
  } catch (err) {
    return fail(isCryptoError(err) ? err.message : 'malformed key', err);
  }
  return { senderPublicKey, recipientSecretKey };
}

/**
 * Parses a comma-separated list of key tuples (as in `AGENT_STRING_SECRETKEYS`). Entries are
 * trimmed; empty entries are ignored; positions in messages count every comma-separated entry.
 * @throws {@link CryptoError} `CRYPTO_BAD_KEY_TUPLE`.
 */
export function parseKeyTupleList(text: string): KeyTuple[] {
  const out: KeyTuple[] = [];
  text.split(',').forEach((entry, i) => {
    if (entry.trim() !== '') out.push(parseKeyTuple(entry, i + 1));
  });
  return out;
}
