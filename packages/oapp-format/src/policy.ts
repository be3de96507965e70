import {
  assertStrongPublicKey,
  decodeHex,
  encodeHex,
  equalBytes,
  isCryptoError,
  parseKey,
  type Key,
  type KeySpec,
} from '@org/envelope-crypto';
import { MAX_CLOCK_SKEW_SECONDS, type FormatVersion, type PackageKind } from './constants.js';
import { OappError } from './errors.js';
import { fingerprint } from './fingerprint.js';
import type { Header } from './header.js';
import { displayText } from './display.js';
import { excerpt } from './internal/excerpt.js';
import { verifyRecord, type SignatureRecord } from './signatures.js';

/** A key the deployment names, with its bootstrap id. */
export interface TrustedKey {
  readonly id: string;
  readonly publicKey: Uint8Array;
}

/**
 * The deploy-time verification policy (from the bootstrap's `packaging` block and `keys`). Policy
 * lives only here, in the verifier: nothing in a package can change it.
 */
export interface DeploymentPolicy {
  readonly packageId: string;
  readonly packagerIdentities: readonly TrustedKey[];
  readonly requiredSigners: readonly TrustedKey[];
  readonly additionalSigners: readonly TrustedKey[];
  readonly requiredAdditionalSignerCount: number;
  /**
   * The release floor (bootstrap `packaging.minimumSequence`, SPEC.md §6 step 13a): a v2 package whose sequence is
   * below it is `POLICY_BELOW_MINIMUM`, and a v1 package (no sequence) is refused whenever it is set, 0 included.
   */
  readonly minimumSequence?: number | undefined;
  /**
   * The operator's deliberate downgrade (bootstrap `packaging.allowDowngradeTo`): a package of exactly this
   * sequence is accepted although older than (or a different package under) the remembered newest. It never
   * goes below `minimumSequence`. Used when the freshness options give no `allowSequence`.
   */
  readonly allowDowngradeTo?: number | undefined;
  /** Clock skew allowed past `expiresAt` (bootstrap `packaging.clockSkewSeconds`, 0 … 86400; default 300). */
  readonly clockSkewSeconds?: number | undefined;
}

/** Which named signers were found valid. */
export interface SignerReport {
  readonly required: readonly { id: string; fingerprint: string }[];
  readonly additional: readonly { id: string; fingerprint: string }[];
  /** Records whose keys the policy does not name (not counted, not verified). */
  readonly ignored: number;
}

function policyError(message: string): never {
  throw new OappError('POLICY_INVALID', message);
}

const hexOf = encodeHex;

/**
 * Checks a policy's own consistency (docs/security-requirements.md A.1 "Threshold counting", S91, S92) and its
 * keys (SPEC.md §2, S176).
 * @throws {@link OappError} `POLICY_INVALID`; `CRYPTO_WEAK_KEY` / `CRYPTO_INVALID_PUBLIC_KEY` for a weak /
 *   non-canonical key in any list.
 */
export function validatePolicy(p: DeploymentPolicy): void {
  const k = p.requiredAdditionalSignerCount;
  if (!Number.isSafeInteger(k) || k < 0 || k > p.additionalSigners.length) {
    policyError(`requiredAdditionalSignerCount must be an integer from 0 to ${p.additionalSigners.length}`);
  }
  const required = new Set(p.requiredSigners.map((s) => hexOf(s.publicKey)));
  for (const a of p.additionalSigners) {
    if (required.has(hexOf(a.publicKey)))
      policyError(`signer ${displayText(a.id)} is in both requiredSigners and additionalSigners`);
  }
  for (const [name, list] of [
    ['packagerIdentities', p.packagerIdentities],
    ['requiredSigners', p.requiredSigners],
    ['additionalSigners', p.additionalSigners],
  ] as const) {
    // A key listed twice would count twice toward K (docs/security-requirements.md A.1: count by raw key, once).
    if (new Set(list.map((k) => hexOf(k.publicKey))).size !== list.length)
      policyError(`${name} lists the same key twice`);
  }
  for (const s of p.requiredSigners) assertTrustedKey(s, 'sign', 'requiredSigners');
  for (const s of p.additionalSigners) assertTrustedKey(s, 'sign', 'additionalSigners');
  for (const s of p.packagerIdentities) assertTrustedKey(s, 'authenticated', 'packagerIdentities');
  if (typeof p.packageId !== 'string' || p.packageId.length === 0)
    policyError('packageId must be a non-empty string');
  const sequenceField = (name: string, v: unknown) => {
    if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0))
      policyError(`${name} must be an integer from 0 to 9007199254740991`);
  };
  sequenceField('minimumSequence', p.minimumSequence);
  sequenceField('allowDowngradeTo', p.allowDowngradeTo);
  if (
    p.minimumSequence !== undefined &&
    p.allowDowngradeTo !== undefined &&
    p.allowDowngradeTo < p.minimumSequence
  )
    policyError(
      `allowDowngradeTo (${p.allowDowngradeTo}) is below minimumSequence (${p.minimumSequence}): the floor always applies`,
    );
  const skew = p.clockSkewSeconds;
  if (
    skew !== undefined &&
    (typeof skew !== 'number' || !Number.isSafeInteger(skew) || skew < 0 || skew > MAX_CLOCK_SKEW_SECONDS)
  )
    policyError(`clockSkewSeconds must be an integer from 0 to ${MAX_CLOCK_SKEW_SECONDS}`);
}

/**
 * SPEC.md §2: a key's own defect has the key's code wherever the key is, a policy included: `CRYPTO_WEAK_KEY`
 * (weak) or `CRYPTO_INVALID_PUBLIC_KEY` (not canonical, or not on the curve). `POLICY_INVALID` is kept for
 * defects of the policy itself (a key listed twice, K out of range, an empty packageId).
 */
function assertTrustedKey(k: TrustedKey, purpose: 'sign' | 'authenticated', list: string): void {
  try {
    assertStrongPublicKey(purpose, k.publicKey, k.id);
  } catch (cause) {
    if (
      isCryptoError(cause) &&
      (cause.code === 'CRYPTO_WEAK_KEY' || cause.code === 'CRYPTO_INVALID_PUBLIC_KEY')
    )
      throw new OappError(cause.code, `${list}: ${cause.message}`, {
        cause,
        details: { field: list, keyId: k.id },
      });
    if (isCryptoError(cause)) throw new OappError('POLICY_INVALID', cause.message, { cause });
    throw cause;
  }
}

/**
 * SPEC.md §6 step 9: byte-exact packageId comparison (no Unicode normalisation, no case folding). The message
 * shows both ids as escaped excerpts: the HEADER one is not authenticated yet.
 * @throws {@link OappError} `POLICY_PACKAGE_ID_MISMATCH`.
 */
export function checkPackageId(p: DeploymentPolicy, header: Header): void {
  if (header.packageId !== p.packageId) {
    throw new OappError(
      'POLICY_PACKAGE_ID_MISMATCH',
      `the package id ${excerpt(header.packageId)} does not equal the deployment's packaging.packageId ` +
        `${excerpt(p.packageId)} (compared byte for byte)`,
      {
        details: { expected: p.packageId, found: header.packageId },
      },
    );
  }
}

/**
 * SPEC.md §6 steps 10–11: the packager key must not be weak, must be canonical (S176: one code each, in every
 * position, SPEC.md §2) and must be one of `packagerIdentities`.
 * @throws {@link OappError} `CRYPTO_WEAK_KEY`, `CRYPTO_INVALID_PUBLIC_KEY`, `POLICY_PACKAGER_NOT_TRUSTED`.
 */
export function checkPackager(p: DeploymentPolicy, packager: Uint8Array): TrustedKey {
  try {
    assertStrongPublicKey('authenticated', packager);
  } catch (cause) {
    if (isCryptoError(cause) && cause.code === 'CRYPTO_INVALID_PUBLIC_KEY') {
      throw new OappError(
        'CRYPTO_INVALID_PUBLIC_KEY',
        'the HEADER packager key is not a canonical X25519 public key (its value is p or more)',
        { cause, details: { field: 'packager' } },
      );
    }
    throw new OappError('CRYPTO_WEAK_KEY', 'the HEADER packager key is all-zero or small-order', {
      cause,
      details: { field: 'packager' },
    });
  }
  const trusted = p.packagerIdentities.find((t) => equalBytes(t.publicKey, packager));
  if (trusted === undefined) {
    throw new OappError(
      'POLICY_PACKAGER_NOT_TRUSTED',
      `the package was made by packager ${fingerprint(packager)}, which is not in packagerIdentities`,
      {
        details: { packagerFingerprint: fingerprint(packager) },
      },
    );
  }
  return trusted;
}

/**
 * SPEC.md §6 step 12: verify every record whose key the policy names (a failing one rejects the
 * package), then require every required signer and K distinct additional signers, counted once
 * per raw public key.
 * @throws {@link OappError} `POLICY_SIGNATURE_INVALID`, `POLICY_REQUIRED_SIGNER_MISSING`, `POLICY_SIGNER_THRESHOLD_NOT_MET`.
 */
export function checkSignatures(
  p: Pick<DeploymentPolicy, 'requiredSigners' | 'additionalSigners' | 'requiredAdditionalSignerCount'>,
  kind: PackageKind,
  statementBytes: Uint8Array,
  records: readonly SignatureRecord[],
  version: FormatVersion,
): SignerReport {
  const named = new Map<string, TrustedKey>();
  for (const s of [...p.requiredSigners, ...p.additionalSigners]) named.set(hexOf(s.publicKey), s);
  const valid = new Set<string>();
  let ignored = 0;
  for (const r of records) {
    const key = hexOf(r.publicKey);
    const signer = named.get(key);
    if (signer === undefined) {
      ignored++;
      continue;
    }
    if (!verifyRecord(kind, statementBytes, r, version)) {
      throw new OappError(
        'POLICY_SIGNATURE_INVALID',
        `the signature of signer ${displayText(signer.id)} (${fingerprint(r.publicKey)}) does not verify`,
        {
          details: { signerId: signer.id, fingerprint: fingerprint(r.publicKey) },
        },
      );
    }
    valid.add(key);
  }
  const describe = (s: TrustedKey) => ({ id: s.id, fingerprint: fingerprint(s.publicKey) });
  for (const s of p.requiredSigners) {
    if (!valid.has(hexOf(s.publicKey))) {
      throw new OappError(
        'POLICY_REQUIRED_SIGNER_MISSING',
        `required signer ${displayText(s.id)} (${fingerprint(s.publicKey)}) has not signed the package`,
        {
          details: { signerId: s.id, fingerprint: fingerprint(s.publicKey) },
        },
      );
    }
  }
  const additional = p.additionalSigners.filter((s) => valid.has(hexOf(s.publicKey)));
  const k = p.requiredAdditionalSignerCount;
  if (additional.length < k) {
    throw new OappError(
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
      `${additional.length} of ${k} required additional signatures found`,
      {
        details: { found: additional.length, required: k },
      },
    );
  }
  return { required: p.requiredSigners.map(describe), additional: additional.map(describe), ignored };
}

/** The `packaging` block of a bootstrap record (signers as `{id}` objects or plain strings). */
export interface PackagingBlock {
  packageId: string;
  packagerIdentities?: readonly string[] | undefined;
  requiredSigners?: readonly (string | { id: string })[] | undefined;
  additionalSigners?: readonly (string | { id: string })[] | undefined;
  requiredAdditionalSignerCount?: number | undefined;
  /** The release floor (SPEC.md §6 step 13a). */
  minimumSequence?: number | undefined;
  /** The one sequence accepted although older than the remembered newest. */
  allowDowngradeTo?: number | undefined;
  /** Clock skew allowed past `expiresAt`, 0 … 86400 (default 300). */
  clockSkewSeconds?: number | undefined;
}

function lookup(
  keys: ReadonlyMap<string, Key>,
  id: string,
  purpose: 'sign' | 'authenticated',
  field: string,
): TrustedKey {
  const k = keys.get(id);
  if (k === undefined) policyError(`${field}: no key with id ${displayText(id)} in keys`);
  if (k.purpose !== purpose || k.type !== 'public')
    policyError(`${field}: key ${displayText(id)} must be a ${purpose} public key`);
  return { id, publicKey: k.bytes };
}

/**
 * Builds a {@link DeploymentPolicy} from a bootstrap record's `packaging` block and `keys`, the release settings
 * (`minimumSequence`, `allowDowngradeTo`, `clockSkewSeconds`) included and checked.
 * @throws {@link OappError} `POLICY_INVALID`; `CryptoError` for malformed keys.
 */
export function policyFromBootstrap(
  packaging: PackagingBlock,
  keySpecs: readonly KeySpec[],
): DeploymentPolicy {
  const keys = new Map<string, Key>();
  for (const spec of keySpecs) {
    if (spec.id === undefined || keys.has(spec.id)) policyError(`keys: every key needs a unique id`);
    keys.set(spec.id, parseKey(spec));
  }
  const idOf = (s: string | { id: string }) => (typeof s === 'string' ? s : s.id);
  const policy: DeploymentPolicy = {
    packageId: packaging.packageId,
    packagerIdentities: (packaging.packagerIdentities ?? []).map((id) =>
      lookup(keys, id, 'authenticated', 'packagerIdentities'),
    ),
    requiredSigners: (packaging.requiredSigners ?? []).map((s) =>
      lookup(keys, idOf(s), 'sign', 'requiredSigners'),
    ),
    additionalSigners: (packaging.additionalSigners ?? []).map((s) =>
      lookup(keys, idOf(s), 'sign', 'additionalSigners'),
    ),
    requiredAdditionalSignerCount: packaging.requiredAdditionalSignerCount ?? 0,
    ...(packaging.minimumSequence === undefined ? {} : { minimumSequence: packaging.minimumSequence }),
    ...(packaging.allowDowngradeTo === undefined ? {} : { allowDowngradeTo: packaging.allowDowngradeTo }),
    ...(packaging.clockSkewSeconds === undefined ? {} : { clockSkewSeconds: packaging.clockSkewSeconds }),
  };
  validatePolicy(policy);
  return policy;
}

/** A trusted key from hex (for tests and tools). */
export function trustedKey(id: string, publicKeyHex: string): TrustedKey {
  return { id, publicKey: decodeHex(publicKeyHex, 32, `key "${id}"`) };
}
