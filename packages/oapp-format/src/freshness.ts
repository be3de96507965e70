import { DEFAULT_CLOCK_SKEW_SECONDS, MAX_CLOCK_SKEW_SECONDS, type FormatVersion } from './constants.js';
import { OappError } from './errors.js';
import type { Header } from './header.js';
import { headerVersion } from './header.js';

// Rollback and freeze (SPEC.md §6 step 13a): decided on the authenticated release fields of a v2 package against
// the deployment's floor, the newest release it accepted before and the clock.

/** The release a package describes (from its authenticated HEADER, equal to its signed STATEMENT in v2). */
export interface ReleaseInfo {
  readonly formatVersion: FormatVersion;
  /** `null` for a v1 package, which has no sequence. */
  readonly sequence: number | null;
  readonly createdAt: string;
  readonly expiresAt: string | null;
}

/**
 * How a release compares with what the deployment accepted before: `first` (nothing remembered), `newer`, `same`
 * (the same sequence and content), `allowed-downgrade` (the operator's `allowSequence`), `unversioned` (a v1
 * package, accepted only when no floor and no remembered newest exist).
 */
export type FreshnessVerdict = 'first' | 'newer' | 'same' | 'allowed-downgrade' | 'unversioned';

/** A release with the verdict the freshness check gave it. */
export interface PackageRelease extends ReleaseInfo {
  readonly verdict: FreshnessVerdict;
}

/** The newest release a deployment accepted for its package id (what a consumer remembers). */
export interface NewestRelease {
  readonly sequence: number;
  /** SHA-256 of that release's content, 64 hex digits. */
  readonly contentSha256: string;
}

/** The verifier's freshness inputs (SPEC.md §6 step 13a). */
export interface FreshnessOptions {
  /** The newest release accepted before for this package id; absent when none is remembered. */
  readonly newest?: NewestRelease | undefined;
  /** The time to compare `expiresAt` with (default: now). */
  readonly now?: Date | undefined;
  /** Skew allowed past `expiresAt`, 0 … 86400 seconds (default: the policy's, else 300). */
  readonly clockSkewSeconds?: number | undefined;
  /** The one sequence accepted although older than `newest` (default: the policy's `allowDowngradeTo`). */
  readonly allowSequence?: number | undefined;
}

/** The release of a parsed HEADER. */
export function releaseOf(header: Header): ReleaseInfo {
  const formatVersion = headerVersion(header);
  return {
    formatVersion,
    sequence: formatVersion === 1 ? null : (header.sequence ?? null),
    createdAt: header.createdAt,
    expiresAt: header.expiresAt ?? null,
  };
}

function invalid(message: string): never {
  throw new OappError('POLICY_INVALID', message);
}

function sequenceArg(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    invalid(`${name} must be an integer from 0 to 9007199254740991`);
  return v;
}

function checkOptions(
  floor: number | undefined,
  f: FreshnessOptions,
): { newest: NewestRelease | undefined; allow: number | undefined; now: number; skew: number } {
  sequenceArg(floor, 'minimumSequence');
  let newest: NewestRelease | undefined;
  if (f.newest !== undefined) {
    const sequence =
      sequenceArg(f.newest.sequence, 'freshness.newest.sequence') ??
      invalid('freshness.newest.sequence is required');
    const sha = f.newest.contentSha256;
    if (typeof sha !== 'string' || !/^[0-9a-fA-F]{64}$/.test(sha))
      invalid('freshness.newest.contentSha256 must be 64 hex digits');
    newest = { sequence, contentSha256: sha.toLowerCase() };
  }
  const allow = sequenceArg(f.allowSequence, 'freshness.allowSequence');
  const now = f.now ?? new Date();
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) invalid('freshness.now must be a valid Date');
  const skew = f.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  if (!Number.isSafeInteger(skew) || skew < 0 || skew > MAX_CLOCK_SKEW_SECONDS)
    invalid(`freshness.clockSkewSeconds must be an integer from 0 to ${MAX_CLOCK_SKEW_SECONDS}`);
  return { newest, allow, now: now.getTime(), skew };
}

/**
 * Internal: the freshness inputs of a verification with the policy's defaults (`clockSkewSeconds`, `allowSequence`
 * from `allowDowngradeTo`), checked as SPEC.md §6 step 8 requires (before the packager is looked at).
 * @throws {@link OappError} `POLICY_INVALID` for malformed inputs.
 */
export function freshnessInputs(
  policy: {
    minimumSequence?: number | undefined;
    clockSkewSeconds?: number | undefined;
    allowDowngradeTo?: number | undefined;
  },
  f: FreshnessOptions = {},
): FreshnessOptions {
  const resolved: FreshnessOptions = {
    ...f,
    clockSkewSeconds: f.clockSkewSeconds ?? policy.clockSkewSeconds,
    allowSequence: f.allowSequence ?? policy.allowDowngradeTo,
  };
  checkOptions(policy.minimumSequence, resolved);
  return resolved;
}

/**
 * Decides whether a release is fresh enough to accept (SPEC.md §6 step 13a), in this order:
 * 1. a v1 package (no sequence) is refused when a floor (`minimumSequence`, 0 included) or a remembered newest
 *    exists: `POLICY_BELOW_MINIMUM`, else `POLICY_ROLLBACK`; otherwise it is `unversioned`;
 * 2. `sequence < minimumSequence` → `POLICY_BELOW_MINIMUM` (the floor holds even for `allowSequence`);
 * 3. with a remembered newest: `sequence < newest.sequence` → `POLICY_ROLLBACK`, and the same sequence with
 *    another content SHA-256 → `POLICY_SEQUENCE_REUSED`, both unless `sequence === allowSequence`;
 * 4. `expiresAt` present and `now > expiresAt + skew` → `POLICY_EXPIRED`.
 * Pure: it reads no clock when `freshness.now` is given and remembers nothing (the consumer records the newest
 * accepted release only after the whole package has been opened).
 * @param release the package's release (`release` of a verified package, or of an inspection).
 * @param contentSha256 the package's `content.sha256` (64 hex digits).
 * @param minimumSequence the policy's floor, if any.
 * @param freshness what the deployment remembers, the clock and the skew.
 * @returns the release with its verdict.
 * @throws {@link OappError} `POLICY_BELOW_MINIMUM`, `POLICY_ROLLBACK`, `POLICY_SEQUENCE_REUSED`, `POLICY_EXPIRED`;
 *   `POLICY_INVALID` for malformed freshness inputs.
 */
export function checkFreshness(
  release: ReleaseInfo,
  contentSha256: string,
  minimumSequence: number | undefined,
  freshness: FreshnessOptions = {},
): PackageRelease {
  const { newest, allow, now, skew } = checkOptions(minimumSequence, freshness);
  const seq = release.sequence;
  const details = {
    sequence: seq,
    minimumSequence: minimumSequence ?? null,
    newestSequence: newest?.sequence ?? null,
  };
  if (seq === null) {
    if (minimumSequence !== undefined)
      throw new OappError(
        'POLICY_BELOW_MINIMUM',
        `the package is format v1 and has no release sequence; the deployment requires sequence ${minimumSequence} or later`,
        { details },
      );
    if (newest !== undefined)
      throw new OappError(
        'POLICY_ROLLBACK',
        `the package is format v1 and has no release sequence; the deployment accepted sequence ${newest.sequence} before`,
        { details },
      );
    return { ...release, verdict: 'unversioned' };
  }
  if (minimumSequence !== undefined && seq < minimumSequence)
    throw new OappError(
      'POLICY_BELOW_MINIMUM',
      `the package's release sequence ${seq} is below the deployment's minimumSequence ${minimumSequence}`,
      { details },
    );
  let verdict: FreshnessVerdict = 'first';
  if (newest !== undefined) {
    const allowed = allow !== undefined && seq === allow;
    if (seq > newest.sequence) verdict = 'newer';
    else if (seq === newest.sequence && contentSha256.toLowerCase() === newest.contentSha256)
      verdict = 'same';
    else if (allowed) verdict = 'allowed-downgrade';
    else if (seq < newest.sequence)
      throw new OappError(
        'POLICY_ROLLBACK',
        `the package's release sequence ${seq} is older than sequence ${newest.sequence}, which the deployment accepted before`,
        { details },
      );
    else
      throw new OappError(
        'POLICY_SEQUENCE_REUSED',
        `the package reuses release sequence ${seq} for other content than the deployment accepted under it`,
        { details },
      );
  }
  if (release.expiresAt !== null && now > Date.parse(release.expiresAt) + skew * 1000)
    throw new OappError(
      'POLICY_EXPIRED',
      `the package expired at ${release.expiresAt} (clock skew allowed: ${skew} s)`,
      { details: { expiresAt: release.expiresAt, clockSkewSeconds: skew } },
    );
  return { ...release, verdict };
}
