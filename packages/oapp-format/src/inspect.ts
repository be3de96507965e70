import { decodeHex, encodeHex, equalBytes } from '@org/envelope-crypto';
import type { FormatVersion, PackageKind } from './constants.js';
import { isOappError, type OappErrorCode } from './errors.js';
import { checkFreshness, releaseOf, type FreshnessOptions, type FreshnessVerdict } from './freshness.js';
import type { ContentInfo } from './content.js';
import { fingerprint } from './fingerprint.js';
import type { EnvelopeLink } from './header.js';
import { ByteReader } from './internal/byte-reader.js';
import { readPackagePrefix } from './parse.js';
import { validatePolicy, type DeploymentPolicy } from './policy.js';
import { verifyRecord } from './signatures.js';

/** What a policy says of a signature record's key (SPEC.md §6.3): `unknown` when no policy is given. */
export type SignerRole = 'required' | 'additional' | 'unknown';

/**
 * The verdict a display shows for a signature record (SPEC.md §6.3): `trusted` (the signature verifies and the
 * given policy names its key), `unknown-signer` (the signature verifies but no given policy names its key: the
 * key may be anyone's, and its text is only that key's claim) or `invalid` (the signature does not verify).
 */
export type SignatureStatus = 'trusted' | 'unknown-signer' | 'invalid';

/** Options of {@link inspectPackage}. */
export interface InspectPackageOptions {
  /**
   * A policy to mark signers against: records of keys it names get their role and id. Nothing is refused
   * because of it (inspection decides nothing); the policy itself is validated.
   */
  readonly policy?: DeploymentPolicy | undefined;
  /**
   * Freshness inputs (SPEC.md §6 step 13a) to give a rollback verdict without opening the package: with these or a
   * policy, the inspection carries `rollback`. Nothing is refused because of them.
   */
  readonly freshness?: FreshnessOptions | undefined;
}

/**
 * The rollback verdict of an inspection (SPEC.md §6.3): what step 13a would decide. `verdict` is `refused` when it
 * would refuse the package, with the code and message it would give; nothing is authenticated by inspection.
 */
export interface RollbackVerdict {
  readonly verdict: FreshnessVerdict | 'refused';
  readonly code: OappErrorCode | null;
  readonly message: string | null;
}

/** What `inspectPackage` shows: everything readable without a secret key (SPEC.md §6.3). */
export interface PackageInspection {
  readonly format: string;
  /** The frame version (same as `formatVersion`). */
  readonly version: number;
  /** The frame version: 1 or 2. */
  readonly formatVersion: FormatVersion;
  readonly kind: PackageKind;
  readonly packageId: string;
  /** The release sequence (v2), or `null` (v1). */
  readonly sequence: number | null;
  readonly createdAt: string;
  /** When the release stops being accepted (v2, optional), or `null`. */
  readonly expiresAt: string | null;
  /** With a policy or freshness inputs: what SPEC.md §6 step 13a would decide; otherwise `null`. */
  readonly rollback: RollbackVerdict | null;
  readonly content: ContentInfo;
  readonly headerSha256: string;
  readonly packager: { readonly publicKeyHex: string; readonly fingerprint: string };
  readonly recipients: readonly { readonly fingerprint: string }[];
  readonly signatures: readonly {
    readonly publicKeyHex: string;
    readonly fingerprint: string;
    readonly signText: string;
    /** Strict Ed25519 verification of this record over this package's STATEMENT (mathematics only, no trust). */
    readonly valid: boolean;
    /** The role of the key in the given policy; `unknown` when no policy is given or it does not name the key. */
    readonly signer: SignerRole;
    /** The policy's id of the key, or `null`. */
    readonly signerId: string | null;
    /** What to show: never "valid" alone; a valid record of a key no policy names is `unknown-signer`. */
    readonly status: SignatureStatus;
  }[];
  readonly license: Readonly<Record<string, unknown>> | null;
  readonly envelope: readonly EnvelopeLink[];
  readonly payload: {
    readonly aead: string;
    readonly chunkSize: number;
    readonly ciphertextBytes: number;
    readonly ciphertextSha256: string;
  };
}

function rollbackVerdict(
  release: ReturnType<typeof releaseOf>,
  contentSha256: string,
  policy: DeploymentPolicy | undefined,
  f: FreshnessOptions,
): RollbackVerdict {
  try {
    const { verdict } = checkFreshness(release, contentSha256, policy?.minimumSequence, {
      ...f,
      clockSkewSeconds: f.clockSkewSeconds ?? policy?.clockSkewSeconds,
      allowSequence: f.allowSequence ?? policy?.allowDowngradeTo,
    });
    return { verdict, code: null, message: null };
  } catch (err) {
    // Malformed freshness inputs (POLICY_INVALID) are the caller's error, not a verdict.
    if (!isOappError(err) || err.code === 'POLICY_INVALID') throw err;
    return { verdict: 'refused', code: err.code, message: err.message };
  }
}

function roleOf(
  policy: DeploymentPolicy | undefined,
  publicKey: Uint8Array,
): { role: SignerRole; id: string | null } {
  const named = (list: readonly { id: string; publicKey: Uint8Array }[]) =>
    list.find((k) => equalBytes(k.publicKey, publicKey));
  const required = policy === undefined ? undefined : named(policy.requiredSigners);
  if (required !== undefined) return { role: 'required', id: required.id };
  const additional = policy === undefined ? undefined : named(policy.additionalSigners);
  if (additional !== undefined) return { role: 'additional', id: additional.id };
  return { role: 'unknown', id: null };
}

/**
 * Inspects a package without any secret key: parses every section (strictly, with all limits)
 * and verifies every signature. It does not read the payload beyond its declared length and does
 * not check the packager against any policy: that is the deployment's job. With `options.policy`, each
 * signature is marked with the role the policy gives its key; a valid signature of any other key is an
 * `unknown-signer` (SPEC.md §6.3).
 * With a policy or `options.freshness`, `rollback` says what the freshness check (SPEC.md §6 step 13a) would decide.
 * @throws {@link OappError} `FORMAT_*`; with a policy, what `validatePolicy` throws; `POLICY_INVALID` for
 *   malformed freshness inputs.
 */
export async function inspectPackage(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  options: InspectPackageOptions = {},
): Promise<PackageInspection> {
  const { policy, freshness } = options;
  if (policy !== undefined) validatePolicy(policy);
  const r = new ByteReader(source instanceof Uint8Array ? [source] : source);
  try {
    const p = await readPackagePrefix(r);
    const { header, statement } = p;
    const release = releaseOf(header);
    return {
      format: header.format,
      version: p.version,
      formatVersion: p.version,
      kind: p.kind,
      packageId: header.packageId,
      sequence: release.sequence,
      createdAt: header.createdAt,
      expiresAt: release.expiresAt,
      rollback:
        policy === undefined && freshness === undefined
          ? null
          : rollbackVerdict(release, header.content.sha256, policy, freshness ?? {}),
      content: header.content,
      headerSha256: encodeHex(p.headerSha256),
      packager: { publicKeyHex: header.packager, fingerprint: fingerprint(decodeHex(header.packager, 32)) },
      recipients: p.stanzas.map((s) => ({ fingerprint: encodeHex(s.hint) })),
      signatures: p.signatures.map((rec) => {
        const valid = verifyRecord(p.kind, p.statementBytes, rec, p.version);
        const { role, id } = roleOf(policy, rec.publicKey);
        const status: SignatureStatus = !valid
          ? 'invalid'
          : role === 'unknown'
            ? 'unknown-signer'
            : 'trusted';
        return {
          publicKeyHex: encodeHex(rec.publicKey),
          fingerprint: fingerprint(rec.publicKey),
          signText: rec.signText,
          valid,
          signer: role,
          signerId: id,
          status,
        };
      }),
      license: statement.license ?? null,
      envelope: header.envelope?.chain ?? [],
      payload: {
        aead: header.payload.aead,
        chunkSize: header.payload.chunkSize,
        ciphertextBytes: p.payloadLength,
        ciphertextSha256: header.payload.ciphertextSha256,
      },
    };
  } finally {
    await r.close();
  }
}
