import { decodeBase64, encodeBase64, keyFromBytes, type Key, type KeyTuple } from '@org/envelope-crypto';
import { MAGIC } from './constants.js';
import { createPackage, type PackageSigner } from './create.js';
import { OappError } from './errors.js';
import type { PackageRelease } from './freshness.js';
import { openPackage } from './open.js';
import { validatePolicy, type DeploymentPolicy, type SignerReport, type TrustedKey } from './policy.js';
import type { ReleaseOptions } from './release.js';

// The encrypted bootstrap (SPEC.md §9): a package of kind `bootstrap` (its own media type and signing type),
// packageId "bootstrap", written as padded standard Base64. Administrators' signature records over its STATEMENT
// make it prove who wrote it; without them it proves only that someone holding the packager's or the
// deployment's secret key made it (key-compromise impersonation, SPEC.md §9).

/** The packageId every encrypted bootstrap carries. */
export const BOOTSTRAP_PACKAGE_ID = 'bootstrap';
/** Largest bootstrap plaintext, in bytes. */
export const MAX_BOOTSTRAP_BYTES = 4 * 1024 * 1024;

/** Options of {@link encryptBootstrap}: release options as for `createPackage` (v2 by default). */
export interface EncryptBootstrapOptions extends ReleaseOptions {
  readonly packagerSecretKey: Key;
  readonly recipients: readonly Key[];
  /** Administrators signing the bootstrap STATEMENT (SPEC.md §9); may be empty. */
  readonly signers?: readonly PackageSigner[] | undefined;
}

/** The administrators whose signatures a bootstrap must carry: Ed25519 public keys and how many must sign. */
export interface BootstrapAdministrators {
  /** The administrators' `sign` public keys, each once. */
  readonly keys: readonly TrustedKey[];
  /** How many distinct administrators must have signed: 1 … `keys.length`. */
  readonly threshold: number;
}

/** Options of {@link decryptBootstrap} and {@link openEncryptedBootstrap}. */
export interface DecryptBootstrapOptions {
  /**
   * When given, the bootstrap's signature records are checked (before any stanza is opened) as additional signers
   * with K = `threshold`: `POLICY_SIGNATURE_INVALID`, `POLICY_SIGNER_THRESHOLD_NOT_MET`. Without it the records
   * are ignored.
   */
  readonly administrators?: BootstrapAdministrators | undefined;
  /** The time to compare `expiresAt` with (default: now). */
  readonly now?: Date | undefined;
  /** Skew allowed past `expiresAt` (default 300 s). */
  readonly clockSkewSeconds?: number | undefined;
}

/** An opened encrypted bootstrap. */
export interface OpenedBootstrap {
  readonly content: Uint8Array;
  /** Format version, sequence, times; verdict `first` (v2) or `unversioned` (v1). */
  readonly release: PackageRelease;
  /** The administrators found (as `additional`); `ignored` counts records of other keys (all, without administrators). */
  readonly signers: SignerReport;
  /** How many signature records the bootstrap carries, checked or not. */
  readonly signatureRecords: number;
}

/**
 * Encrypts bootstrap bytes (already validated by the caller) for one or more recipients, signed by `signers`.
 * @returns Base64 text of the package.
 * @throws {@link OappError} `FORMAT_PAYLOAD_TOO_LARGE`, `FORMAT_BAD_ARGUMENT`, `FORMAT_TOO_MANY_SIGNATURES`;
 *   `CryptoError` for wrong keys.
 */
export function encryptBootstrap(bootstrap: Uint8Array, options: EncryptBootstrapOptions): string {
  if (bootstrap.length > MAX_BOOTSTRAP_BYTES) {
    throw new OappError(
      'FORMAT_PAYLOAD_TOO_LARGE',
      `the bootstrap is ${bootstrap.length} bytes, the limit is ${MAX_BOOTSTRAP_BYTES}`,
    );
  }
  const pkg = createPackage({
    kind: 'bootstrap',
    packageId: BOOTSTRAP_PACKAGE_ID,
    content: bootstrap,
    packagerSecretKey: options.packagerSecretKey,
    recipients: options.recipients,
    signers: options.signers,
    createdAt: options.createdAt,
    sequence: options.sequence,
    expiresAt: options.expiresAt,
    formatVersion: options.formatVersion,
  });
  return encodeBase64(pkg);
}

/**
 * True when text looks like an encrypted bootstrap: Base64 whose bytes start with the oapp magic.
 * Only the prefix is examined; nothing is decrypted.
 */
export function isEncryptedBootstrapText(text: string): boolean {
  const t = trimAsciiWhitespace(text);
  if (t.length < 12) return false;
  try {
    const head = decodeBase64(t.slice(0, 12));
    return MAGIC.every((b, i) => head[i] === b);
  } catch {
    return false;
  }
}

/** SPEC.md §9: only TAB, LF, CR and SPACE are trimmed (String.prototype.trim also removes Unicode spaces). */
function trimAsciiWhitespace(text: string): string {
  return text.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
}

function decodeText(text: string): Uint8Array {
  try {
    // Outer ASCII whitespace (a trailing newline in a file or variable) is trimmed; inner is an error.
    return decodeBase64(trimAsciiWhitespace(text), 'encrypted bootstrap');
  } catch (cause) {
    // decodeBase64 throws only CRYPTO_BAD_BASE64 for a string argument.
    throw new OappError(
      'FORMAT_BAD_BASE64',
      'the encrypted bootstrap is not canonical padded standard Base64',
      { cause },
    );
  }
}

/**
 * Internal: the signer lists of a bootstrap check. Administrators are additional signers with K = threshold (at
 * least 1); no administrators: no signer lists (records ignored).
 * @throws {@link OappError} `POLICY_INVALID`; `CRYPTO_WEAK_KEY` / `CRYPTO_INVALID_PUBLIC_KEY` for a bad key.
 */
export function administratorPolicy(
  administrators: BootstrapAdministrators | undefined,
  packagerIdentities: readonly TrustedKey[],
): DeploymentPolicy {
  const policy: DeploymentPolicy = {
    packageId: BOOTSTRAP_PACKAGE_ID,
    packagerIdentities,
    requiredSigners: [],
    additionalSigners: administrators?.keys ?? [],
    requiredAdditionalSignerCount: administrators?.threshold ?? 0,
  };
  if (administrators !== undefined) {
    const { keys, threshold } = administrators;
    if (!Array.isArray(keys) || keys.length === 0)
      throw new OappError('POLICY_INVALID', 'administrators: at least one administrator key is needed');
    if (!Number.isSafeInteger(threshold) || threshold < 1 || threshold > keys.length)
      throw new OappError(
        'POLICY_INVALID',
        `administrators: the threshold must be an integer from 1 to ${keys.length}`,
      );
  }
  validatePolicy(policy);
  return policy;
}

/**
 * Decrypts and verifies an encrypted bootstrap with the `AGENT_BOOTSTRAP_SECRETKEY` tuple: the sender public key is
 * the only trusted packager, the secret key must be a recipient; with `administrators`, their signatures are
 * required (checked before any stanza is opened); a v2 bootstrap past its `expiresAt` is refused.
 * @throws {@link OappError} `FORMAT_BAD_BASE64`, `FORMAT_*` (including `FORMAT_WRONG_KIND` for an app
 *   package), `CRYPTO_NO_MATCHING_RECIPIENT`, `CRYPTO_AUTH_FAILED`, `POLICY_PACKAGER_NOT_TRUSTED`,
 *   `POLICY_SIGNATURE_INVALID`, `POLICY_SIGNER_THRESHOLD_NOT_MET`, `POLICY_EXPIRED`, `POLICY_INVALID`, …
 */
export async function openEncryptedBootstrap(
  text: string | Uint8Array,
  key: KeyTuple,
  options: DecryptBootstrapOptions = {},
): Promise<OpenedBootstrap> {
  const bytes = typeof text === 'string' ? decodeText(text) : text;
  const policy = administratorPolicy(options.administrators, [
    { id: 'AGENT_BOOTSTRAP_SECRETKEY sender', publicKey: key.senderPublicKey },
  ]);
  const recipientSecretKey = keyFromBytes('authenticated', 'secret', key.recipientSecretKey);
  const opened = await openPackage(bytes, {
    policy,
    recipientSecretKey,
    kind: 'bootstrap',
    maxPlaintextBytes: MAX_BOOTSTRAP_BYTES,
    freshness: { now: options.now, clockSkewSeconds: options.clockSkewSeconds },
  });
  return {
    content: opened.content,
    release: opened.release,
    signers: opened.signers,
    signatureRecords: opened.parsed.signatures.length,
  };
}

/**
 * Decrypts an encrypted bootstrap (see {@link openEncryptedBootstrap}, which also returns the release and signers).
 * @throws {@link OappError} as {@link openEncryptedBootstrap}.
 */
export async function decryptBootstrap(
  text: string | Uint8Array,
  key: KeyTuple,
  options: DecryptBootstrapOptions = {},
): Promise<Uint8Array> {
  return (await openEncryptedBootstrap(text, key, options)).content;
}
