import { decodeBase64, encodeBase64, keyFromBytes, type Key, type KeyTuple } from '@org/envelope-crypto';
import { MAGIC } from './constants.js';
import { createPackage } from './create.js';
import { OappError } from './errors.js';
import { openPackage } from './open.js';
import type { DeploymentPolicy } from './policy.js';

// The encrypted bootstrap (SPEC.md §9): an oapp/v1 package of kind `bootstrap` (its own media type
// and signing type), packageId "bootstrap", no signatures, written as padded standard Base64.

/** The packageId every encrypted bootstrap carries. */
export const BOOTSTRAP_PACKAGE_ID = 'bootstrap';
/** Largest bootstrap plaintext, in bytes. */
export const MAX_BOOTSTRAP_BYTES = 4 * 1024 * 1024;

/** Options of {@link encryptBootstrap}. */
export interface EncryptBootstrapOptions {
  readonly packagerSecretKey: Key;
  readonly recipients: readonly Key[];
  readonly createdAt?: Date | undefined;
}

/**
 * Encrypts bootstrap bytes (already validated by the caller) for one or more recipients.
 * @returns Base64 text of the package.
 * @throws {@link OappError} `FORMAT_PAYLOAD_TOO_LARGE`, `FORMAT_BAD_ARGUMENT`; `CryptoError` for wrong keys.
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
    createdAt: options.createdAt,
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
 * Decrypts an encrypted bootstrap with the `AGENT_BOOTSTRAP_SECRETKEY` tuple: the sender public
 * key is the only trusted packager, the secret key must be a recipient.
 * @throws {@link OappError} `FORMAT_BAD_BASE64`, `FORMAT_*` (including `FORMAT_WRONG_KIND` for an app
 *   package), `CRYPTO_NO_MATCHING_RECIPIENT`, `CRYPTO_AUTH_FAILED`, `POLICY_PACKAGER_NOT_TRUSTED`, …
 */
export async function decryptBootstrap(text: string | Uint8Array, key: KeyTuple): Promise<Uint8Array> {
  const bytes = typeof text === 'string' ? decodeText(text) : text;
  const policy: DeploymentPolicy = {
    packageId: BOOTSTRAP_PACKAGE_ID,
    packagerIdentities: [{ id: 'AGENT_BOOTSTRAP_SECRETKEY sender', publicKey: key.senderPublicKey }],
    requiredSigners: [],
    additionalSigners: [],
    requiredAdditionalSignerCount: 0,
  };
  const recipientSecretKey = keyFromBytes('authenticated', 'secret', key.recipientSecretKey);
  const opened = await openPackage(bytes, {
    policy,
    recipientSecretKey,
    kind: 'bootstrap',
    maxPlaintextBytes: MAX_BOOTSTRAP_BYTES,
  });
  return opened.content;
}
