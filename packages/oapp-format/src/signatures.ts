import { concatBytes, signDetached, verifyDetached, type Key, expectKey } from '@org/envelope-crypto';
import {
  MAX_SIGNATURES,
  MAX_SIGN_TEXT_BYTES,
  SIGNATURE_RECORD_FIXED_BYTES,
  type FormatVersion,
  type PackageKind,
} from './constants.js';
import { OappError } from './errors.js';
import { signingMessage } from './statement.js';

/** One signature record (SPEC.md §4.5). */
export interface SignatureRecord {
  /** Ed25519 public key of the signer (32 bytes). */
  readonly publicKey: Uint8Array;
  /** The signer's text, covered by the signature. */
  readonly signText: string;
  /** Ed25519 signature (64 bytes) over the signing message. */
  readonly signature: Uint8Array;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The UTF-8 bytes of a signText, checked (well-formed, at most 1 KiB). */
export function signTextBytes(signText: string): Uint8Array {
  if (typeof signText !== 'string' || !signText.isWellFormed()) {
    throw new OappError('FORMAT_BAD_ARGUMENT', 'signText must be a well-formed string');
  }
  const b = new TextEncoder().encode(signText);
  if (b.length > MAX_SIGN_TEXT_BYTES) {
    throw new OappError(
      'FORMAT_BAD_ARGUMENT',
      `signText is ${b.length} bytes, the limit is ${MAX_SIGN_TEXT_BYTES}`,
    );
  }
  return b;
}

/**
 * Signs a statement with a sign secret key.
 * @throws {@link OappError} `FORMAT_BAD_ARGUMENT` (signText too long or not well-formed);
 *   `CryptoError` `CRYPTO_WRONG_KEY_PURPOSE` / `CRYPTO_WRONG_KEY_TYPE` for a wrong key.
 */
export function signStatement(
  kind: PackageKind,
  statementBytes: Uint8Array,
  secretKey: Key,
  signText: string,
  version: FormatVersion,
): SignatureRecord {
  expectKey(secretKey, 'sign', 'secret', 'signers');
  const text = signTextBytes(signText);
  const signature = signDetached(signingMessage(kind, statementBytes, text, version), secretKey.bytes);
  return { publicKey: secretKey.bytes.slice(32, 64), signText, signature };
}

/** Verifies one record against the statement bytes (strict Ed25519, SPEC.md §5.1). */
export function verifyRecord(
  kind: PackageKind,
  statementBytes: Uint8Array,
  r: SignatureRecord,
  version: FormatVersion,
): boolean {
  return verifyDetached(
    r.signature,
    signingMessage(kind, statementBytes, new TextEncoder().encode(r.signText), version),
    r.publicKey,
  );
}

/** Encodes the SIGNATURES section value. */
export function encodeSignatures(records: readonly SignatureRecord[]): Uint8Array {
  if (records.length > MAX_SIGNATURES) {
    throw new OappError(
      'FORMAT_TOO_MANY_SIGNATURES',
      `${records.length} signatures, the limit is ${MAX_SIGNATURES}`,
    );
  }
  const parts = records.map((r) => {
    const text = signTextBytes(r.signText);
    const out = new Uint8Array(SIGNATURE_RECORD_FIXED_BYTES + text.length);
    out.set(r.publicKey, 0);
    new DataView(out.buffer).setUint16(32, text.length);
    out.set(text, 34);
    out.set(r.signature, 34 + text.length);
    return out;
  });
  return concatBytes(...parts);
}

function badRecord(i: number, why: string): never {
  throw new OappError('FORMAT_BAD_SIGNATURES', `signature record ${i}: ${why}`, { details: { record: i } });
}

/**
 * Parses the SIGNATURES section value: records back to back, no trailing bytes.
 * @throws {@link OappError} `FORMAT_BAD_SIGNATURES`, `FORMAT_TOO_MANY_SIGNATURES`.
 */
export function decodeSignatures(value: Uint8Array): SignatureRecord[] {
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const out: SignatureRecord[] = [];
  let off = 0;
  while (off < value.length) {
    if (out.length === MAX_SIGNATURES) {
      throw new OappError('FORMAT_TOO_MANY_SIGNATURES', `more than ${MAX_SIGNATURES} signature records`);
    }
    if (value.length - off < SIGNATURE_RECORD_FIXED_BYTES) badRecord(out.length, 'truncated');
    const len = view.getUint16(off + 32);
    if (len > MAX_SIGN_TEXT_BYTES)
      badRecord(out.length, `signText is longer than ${MAX_SIGN_TEXT_BYTES} bytes`);
    if (value.length - off < SIGNATURE_RECORD_FIXED_BYTES + len) badRecord(out.length, 'truncated');
    let signText: string;
    try {
      signText = fatalUtf8.decode(value.subarray(off + 34, off + 34 + len));
    } catch {
      return badRecord(out.length, 'signText is not valid UTF-8');
    }
    out.push({
      publicKey: value.slice(off, off + 32),
      signText,
      signature: value.slice(off + 34 + len, off + 34 + len + 64),
    });
    off += SIGNATURE_RECORD_FIXED_BYTES + len;
  }
  return out;
}
