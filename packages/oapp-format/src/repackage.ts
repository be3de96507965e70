import { encodeHex, type Key } from '@org/envelope-crypto';
import { MAX_ENVELOPE_DEPTH } from './constants.js';
import { assemblePackage, type PackageSigner } from './create.js';
import { OappError } from './errors.js';
import { openPackage, type OpenPackageOptions } from './open.js';
import { signStatement } from './signatures.js';

/** Options of {@link repackage}. */
export interface RepackageOptions {
  /** How to verify and open the received package: the receiver's own policy and secret key. */
  readonly open: OpenPackageOptions;
  /** The new packager identity (`authenticated` secret key). */
  readonly packagerSecretKey: Key;
  /** The new recipients. */
  readonly recipients: readonly Key[];
  /** Endorsements to append. */
  readonly signers?: readonly PackageSigner[] | undefined;
  /**
   * The new HEADER's creation time, for a v1 package only (default: now). Not used for a v2 package: its HEADER
   * copies `sequence`, `createdAt` and `expiresAt` from the signed STATEMENT.
   */
  readonly createdAt?: Date | undefined;
  readonly chunkSize?: number | undefined;
}

/**
 * Endorse and repackage (SPEC.md §5.3): verifies and opens a received package under the
 * receiver's policy, then emits a new package with the same STATEMENT bytes, every original
 * signature record, the new endorsements appended, a new packager identity and new recipients,
 * and an envelope link naming the previous packager and HEADER. The frame version follows the original's (v1 stays
 * v1); a v2 HEADER copies `sequence`, `createdAt` and `expiresAt` from the STATEMENT.
 * @throws {@link OappError} everything {@link openPackage} throws; `FORMAT_BAD_ARGUMENT` when the
 *   envelope chain would exceed its limit; `CryptoError` for wrong keys.
 */
export async function repackage(source: Uint8Array, options: RepackageOptions): Promise<Uint8Array> {
  const opened = await openPackage(source, options.open);
  const { parsed } = opened;
  const chain = [
    ...(parsed.header.envelope?.chain ?? []),
    { packager: parsed.header.packager, headerSha256: encodeHex(parsed.headerSha256) },
  ];
  if (chain.length > MAX_ENVELOPE_DEPTH) {
    throw new OappError('FORMAT_BAD_ARGUMENT', `the envelope chain would exceed ${MAX_ENVELOPE_DEPTH} links`);
  }
  const added = (options.signers ?? []).map((s) =>
    signStatement(parsed.kind, parsed.statementBytes, s.secretKey, s.signText, parsed.version),
  );
  return assemblePackage({
    kind: parsed.kind,
    statement: parsed.statement,
    statementBytes: parsed.statementBytes,
    signatures: [...parsed.signatures, ...added],
    content: opened.content,
    packagerSecretKey: options.packagerSecretKey,
    recipients: options.recipients,
    createdAt: options.createdAt ?? new Date(),
    chunkSize: options.chunkSize ?? parsed.header.payload.chunkSize,
    envelope: chain,
  });
}
