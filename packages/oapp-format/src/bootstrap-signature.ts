import { decodeBase64, encodeBase64, encodeHex, isCryptoError, sha256 } from '@org/envelope-crypto';
import { MAX_SECTION_BYTES, SECTION } from './constants.js';
import { kindOfMediaType } from './content.js';
import {
  administratorPolicy,
  BOOTSTRAP_PACKAGE_ID,
  MAX_BOOTSTRAP_BYTES,
  type BootstrapAdministrators,
} from './bootstrap.js';
import { statementFor, type PackageSigner } from './create.js';
import { OappError } from './errors.js';
import { checkFreshness, freshnessInputs } from './freshness.js';
import { expectFormat, expectObject } from './internal/fields.js';
import { checkSignatures, type SignerReport } from './policy.js';
import { writerRelease } from './release.js';
import { decodeSignatures, encodeSignatures, signStatement } from './signatures.js';
import { decodeStatement, encodeStatement } from './statement.js';
import { parseStrictJson } from './strict-json.js';

// The detached signature of a plain bootstrap (SPEC.md §9.2): `<bootstrap file>.sig`, a strict JSON object holding
// a v2 bootstrap STATEMENT (the exact file's size and SHA-256, the release fields) and SIGNATURES records over it.

/** `format` of a bootstrap signature file. */
export const BOOTSTRAP_SIGNATURE_FORMAT = 'oapp-bootstrap-signature/v1';
/** Largest bootstrap signature file, in bytes (a STATEMENT and 64 records, in Base64, fit well below it). */
export const MAX_BOOTSTRAP_SIGNATURE_BYTES = 131_072;

/** Options of {@link signBootstrap}. */
export interface SignBootstrapOptions {
  /** The administrators signing: at least one. */
  readonly signers: readonly PackageSigner[];
  /** The release sequence (default: the seconds since the epoch of `createdAt`). */
  readonly sequence?: number | undefined;
  /** Creation time (default: now). */
  readonly createdAt?: Date | undefined;
  /** When the signature stops being accepted: a `Date` or an RFC 3339 time after `createdAt`. */
  readonly expiresAt?: Date | string | undefined;
}

/** Options of {@link verifyBootstrapSignature}. */
export interface VerifyBootstrapSignatureOptions {
  readonly administrators: BootstrapAdministrators;
  /** The time to compare `expiresAt` with (default: now). */
  readonly now?: Date | undefined;
  /** Skew allowed past `expiresAt` (default 300 s). */
  readonly clockSkewSeconds?: number | undefined;
}

/** What a verified bootstrap signature says. */
export interface BootstrapSignatureInfo {
  readonly sequence: number;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  /** The administrators whose signatures verified (as `additional`); `ignored` counts records of other keys. */
  readonly signers: SignerReport;
}

/**
 * Signs a plain bootstrap file's exact bytes (SPEC.md §9.2).
 * @returns the text of its `.sig` file (compact JSON and one LF).
 * @throws {@link OappError} `FORMAT_BAD_ARGUMENT` (no signer, release options), `FORMAT_PAYLOAD_TOO_LARGE`,
 *   `FORMAT_TOO_MANY_SIGNATURES`; `CryptoError` for a wrong key.
 */
export function signBootstrap(bootstrap: Uint8Array, options: SignBootstrapOptions): string {
  if (bootstrap.length > MAX_BOOTSTRAP_BYTES)
    throw new OappError(
      'FORMAT_PAYLOAD_TOO_LARGE',
      `the bootstrap is ${bootstrap.length} bytes, the limit is ${MAX_BOOTSTRAP_BYTES}`,
    );
  const signers: readonly PackageSigner[] = options.signers;
  if (signers === undefined || signers.length === 0)
    throw new OappError('FORMAT_BAD_ARGUMENT', 'a bootstrap signature needs at least one signer');
  const release = writerRelease({
    formatVersion: 2,
    sequence: options.sequence,
    createdAt: options.createdAt,
    expiresAt: options.expiresAt,
  });
  const statement = statementFor(
    'bootstrap',
    BOOTSTRAP_PACKAGE_ID,
    bootstrap.length,
    encodeHex(sha256(bootstrap)),
    undefined,
    release,
  );
  const statementBytes = encodeStatement(statement);
  const records = signers.map((s) => signStatement('bootstrap', statementBytes, s.secretKey, s.signText, 2));
  const doc = {
    format: BOOTSTRAP_SIGNATURE_FORMAT,
    statement: encodeBase64(statementBytes),
    signatures: encodeBase64(encodeSignatures(records)),
  };
  return `${JSON.stringify(doc)}\n`;
}

function base64Member(v: unknown, field: string): Uint8Array {
  if (typeof v !== 'string')
    throw new OappError('FORMAT_BAD_FIELD', `${field}: expected a Base64 string`, { details: { field } });
  try {
    return decodeBase64(v, field);
  } catch (cause) {
    if (!isCryptoError(cause)) throw cause;
    throw new OappError('FORMAT_BAD_BASE64', `${field} is not canonical padded standard Base64`, {
      cause,
      details: { field },
    });
  }
}

/**
 * Verifies a plain bootstrap's detached signature (SPEC.md §9.2): the file is parsed strictly, the records are
 * checked against the administrators (K = threshold), the STATEMENT must describe exactly these bootstrap bytes,
 * and a signature past its `expiresAt` (plus the skew) is refused.
 * @throws {@link OappError} `FORMAT_SECTION_TOO_LARGE`, `FORMAT_BAD_UTF8`, `FORMAT_JSON_*`, `FORMAT_UNKNOWN_FIELD`,
 *   `FORMAT_BAD_FIELD`, `FORMAT_BAD_BASE64`, `FORMAT_WRONG_KIND`, `FORMAT_BAD_SIGNATURES`,
 *   `FORMAT_TOO_MANY_SIGNATURES`, `POLICY_INVALID`, `POLICY_SIGNATURE_INVALID`, `POLICY_SIGNER_THRESHOLD_NOT_MET`,
 *   `CRYPTO_CONTENT_MISMATCH`, `POLICY_EXPIRED`.
 */
export function verifyBootstrapSignature(
  bootstrap: Uint8Array,
  signature: string | Uint8Array,
  options: VerifyBootstrapSignatureOptions,
): BootstrapSignatureInfo {
  // The verifier's own inputs first (POLICY_INVALID, or a key's code), as SPEC.md §9.2 orders them.
  const policy = administratorPolicy(options.administrators, []);
  const freshness = freshnessInputs({}, { now: options.now, clockSkewSeconds: options.clockSkewSeconds });
  const text = typeof signature === 'string' ? new TextEncoder().encode(signature) : signature;
  const v = parseStrictJson(text, { what: 'bootstrap signature', maxBytes: MAX_BOOTSTRAP_SIGNATURE_BYTES });
  expectFormat(v, BOOTSTRAP_SIGNATURE_FORMAT);
  const o = expectObject(v, '', ['format', 'statement', 'signatures']);
  const statementBytes = base64Member(o['statement'], '/statement');
  const signaturesValue = base64Member(o['signatures'], '/signatures');
  const statement = decodeStatement(statementBytes, 2);
  if (kindOfMediaType(statement.content.mediaType) !== 'bootstrap')
    throw new OappError('FORMAT_WRONG_KIND', 'the signed STATEMENT is not a bootstrap statement', {
      details: { expected: 'bootstrap', found: 'app' },
    });
  if (statement.packageId !== BOOTSTRAP_PACKAGE_ID)
    throw new OappError('FORMAT_BAD_FIELD', `/statement/packageId: expected "${BOOTSTRAP_PACKAGE_ID}"`, {
      details: { field: '/statement/packageId' },
    });
  const max = MAX_SECTION_BYTES[SECTION.SIGNATURES] ?? 0;
  if (signaturesValue.length > max)
    throw new OappError(
      'FORMAT_SECTION_TOO_LARGE',
      `/signatures holds ${signaturesValue.length} bytes, the limit is ${max}`,
    );
  const records = decodeSignatures(signaturesValue);
  const signers = checkSignatures(policy, 'bootstrap', statementBytes, records, 2);
  if (
    statement.content.size !== bootstrap.length ||
    statement.content.sha256 !== encodeHex(sha256(bootstrap))
  )
    throw new OappError(
      'CRYPTO_CONTENT_MISMATCH',
      'the bootstrap is not the one its signature describes (size or SHA-256 differs): it changed after signing',
    );
  const release = checkFreshness(
    {
      formatVersion: 2,
      sequence: statement.sequence ?? 0,
      createdAt: statement.createdAt ?? '',
      expiresAt: statement.expiresAt ?? null,
    },
    statement.content.sha256,
    undefined,
    freshness,
  );
  return {
    sequence: release.sequence ?? 0,
    createdAt: release.createdAt,
    expiresAt: release.expiresAt,
    signers,
  };
}
