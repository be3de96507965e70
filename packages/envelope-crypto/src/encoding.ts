import { CryptoError } from './errors.js';

// The only module that decodes hex, Base64 and UTF-8 from untrusted input (docs/security-requirements.md
// S117). Node's own decoders are lenient: Buffer.from(s, 'hex') stops at the first bad character
// and Buffer.from(s, 'base64') skips characters it does not know. Here every input is checked
// against an exact pattern first, and Base64 is re-encoded and compared (canonical form only).

const HEX_RE = /^[0-9a-fA-F]*$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function viewOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Decodes hex of either letter case into bytes, strictly.
 * @param text - the hex string.
 * @param byteLength - the exact number of bytes expected, or `undefined` for any even length.
 * @param what - a non-secret name for messages, e.g. `key "vendor"`.
 * @throws {@link CryptoError} `CRYPTO_BAD_HEX` (non-hex character, odd length),
 *   `CRYPTO_BAD_KEY_LENGTH` (valid hex of the wrong length).
 */
export function decodeHex(text: string, byteLength?: number, what = 'value'): Uint8Array {
  if (typeof text !== 'string') throw new TypeError(`${what}: expected a hex string, got ${typeof text}`);
  if (!HEX_RE.test(text))
    throw new CryptoError('CRYPTO_BAD_HEX', `${what} is not hex: it has a non-hex character`);
  if (text.length % 2 !== 0)
    throw new CryptoError('CRYPTO_BAD_HEX', `${what} is not hex: odd length ${text.length}`);
  if (byteLength !== undefined && text.length !== byteLength * 2) {
    throw new CryptoError(
      'CRYPTO_BAD_KEY_LENGTH',
      `${what} has ${text.length} hex characters, expected ${byteLength * 2}`,
      { details: { expectedHexLength: byteLength * 2, actualHexLength: text.length } },
    );
  }
  // Safe: the pattern and length were checked above, so Node decodes every character.
  return new Uint8Array(Buffer.from(text, 'hex'));
}

/** Encodes bytes as lowercase hex (the one case this project writes). */
export function encodeHex(bytes: Uint8Array): string {
  return viewOf(bytes).toString('hex');
}

/**
 * Decodes canonical, padded, standard-alphabet Base64 (RFC 4648 §4). Whitespace, URL-safe
 * characters, missing or extra padding and non-zero trailing bits are rejected.
 * @throws {@link CryptoError} `CRYPTO_BAD_BASE64`.
 */
export function decodeBase64(text: string, what = 'value'): Uint8Array {
  if (typeof text !== 'string') throw new TypeError(`${what}: expected a Base64 string, got ${typeof text}`);
  if (!BASE64_RE.test(text)) {
    throw new CryptoError('CRYPTO_BAD_BASE64', `${what} is not canonical padded standard Base64`);
  }
  const bytes = Buffer.from(text, 'base64');
  // Non-zero trailing bits decode to the same bytes as the canonical form; re-encoding tells them apart.
  if (bytes.toString('base64') !== text) {
    throw new CryptoError('CRYPTO_BAD_BASE64', `${what} is not canonical Base64 (non-zero trailing bits)`);
  }
  return new Uint8Array(bytes);
}

/** Encodes bytes as padded standard Base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return viewOf(bytes).toString('base64');
}

/**
 * Decodes strict UTF-8: invalid sequences, overlongs and encoded surrogates are errors (never U+FFFD).
 * A leading BOM is kept as U+FEFF (callers that forbid it check for it).
 * @throws {@link CryptoError} `CRYPTO_BAD_UTF8`.
 */
export function decodeUtf8(bytes: Uint8Array, what = 'value'): string {
  try {
    return fatalUtf8.decode(bytes);
  } catch (cause) {
    throw new CryptoError('CRYPTO_BAD_UTF8', `${what} is not valid UTF-8`, { cause });
  }
}

/**
 * Encodes a string as UTF-8. Lone surrogates are an error, never replaced.
 * @throws {@link CryptoError} `CRYPTO_BAD_UTF8`.
 */
export function encodeUtf8(text: string, what = 'value'): Uint8Array {
  if (!text.isWellFormed()) throw new CryptoError('CRYPTO_BAD_UTF8', `${what} has a lone surrogate`);
  return new TextEncoder().encode(text);
}
