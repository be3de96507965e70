import { createHash } from 'node:crypto';
import { join } from 'node:path';
import {
  OappError,
  checkFreshness,
  type FreshnessVerdict,
  type PackageRelease,
  type ReleaseInfo,
} from '@org/oapp-format';
import { BOOTSTRAP_RELEASE_FILE, releaseStore, type RememberedRelease } from './release-store.js';

/**
 * Rollback of signed bootstraps (ADR 0147): `AGENT_BOOTSTRAP_MINIMUM_SEQUENCE`, `AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO`
 * and the data directory that remembers the newest bootstrap accepted.
 */
export interface BootstrapRollbackOptions {
  /** `AGENT_DATA_DIR`; undefined: nothing is remembered, only the floor is checked. */
  readonly dataDir?: string | undefined;
  /** `AGENT_BOOTSTRAP_MINIMUM_SEQUENCE`: the floor, checked before the data directory is read. */
  readonly minimumSequence?: number | undefined;
  /** `AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO`: a bootstrap of exactly this sequence is accepted although older. */
  readonly allowDowngradeTo?: number | undefined;
}

/** The verdict on a signed bootstrap's release, for the start-up report and the write once start-up succeeded. */
export interface BootstrapRollback {
  /** As a package's: `first`, `newer`, `same`, `allowed-downgrade`, or `unversioned` (a v1 encrypted bootstrap). */
  readonly verdict: FreshnessVerdict;
  /** What rollback was checked against, e.g. `floor 3, remembered newest 7` or `no data directory: floor only …`. */
  readonly state: string;
  /** The newest bootstrap sequence remembered before this start (undefined: none). */
  readonly newestBefore?: number | undefined;
  readonly allowDowngradeTo?: number | undefined;
  /** What {@link rememberBootstrapRelease} writes (undefined: nothing changes, e.g. the same bootstrap again). */
  readonly pending?:
    | {
        readonly dataDir: string;
        readonly release: RememberedRelease;
        /** The remembered newest this start checked against (null: none): the only value it may lower. */
        readonly basis: RememberedRelease | null;
      }
    | undefined;
}

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

type RollbackCode = 'POLICY_BELOW_MINIMUM' | 'POLICY_ROLLBACK' | 'POLICY_SEQUENCE_REUSED';

/**
 * Runs oapp-format's `checkFreshness` (SPEC.md §6 step 13a) and rethrows its refusals with the same code and details
 * but a message that says it is the bootstrap and which variable to change.
 */
function asBootstrap(
  check: () => PackageRelease,
  messages: Partial<Record<RollbackCode, string>>,
): PackageRelease {
  try {
    return check();
  } catch (err) {
    if (err instanceof OappError) {
      const message = messages[err.code as RollbackCode];
      if (message !== undefined) throw new OappError(err.code, message, { details: err.details });
    }
    throw err;
  }
}

/**
 * Checks a verified bootstrap's signed `sequence` (null for a v1 encrypted bootstrap) against the floor and the
 * newest bootstrap this agent accepted before with oapp-format's `checkFreshness` (the rules of a package), for
 * the bootstrap's exact bytes `content`. Expiry is the format's (checked when the signature was). Nothing is
 * written here: start-up writes `pending` once it succeeded ({@link rememberBootstrapRelease}).
 * @throws {@link OappError} `POLICY_BELOW_MINIMUM`, `POLICY_ROLLBACK`, `POLICY_SEQUENCE_REUSED`, with a message that
 *   says it is the bootstrap; `AgentError` `AGENT_RELEASE_STATE_UNREADABLE`.
 */
export function checkBootstrapRelease(
  sequence: number | null,
  content: Uint8Array,
  options: BootstrapRollbackOptions,
): BootstrapRollback {
  const { dataDir, minimumSequence: floor, allowDowngradeTo: allow } = options;
  const fix = 'sign a bootstrap with a higher sequence (oapp sign-bootstrap --sequence)';
  const contentSha256 = sha256Hex(content);
  // Expiry was checked with the signature (verifyBootstrapSignature / openEncryptedBootstrap); here only the
  // sequence rules, decided by the format's own step 13a so a bootstrap and a package can never differ.
  const release: ReleaseInfo = {
    formatVersion: sequence === null ? 1 : 2,
    sequence,
    createdAt: '',
    expiresAt: null,
  };
  // The floor needs no data directory, and is checked before it is read.
  asBootstrap(() => checkFreshness(release, contentSha256, floor, {}), {
    POLICY_BELOW_MINIMUM:
      sequence === null
        ? `the bootstrap is format v1 and has no signed sequence; AGENT_BOOTSTRAP_MINIMUM_SEQUENCE requires ${floor} or later`
        : `the bootstrap's signed sequence ${sequence} is below AGENT_BOOTSTRAP_MINIMUM_SEQUENCE ${floor}; ${fix}`,
  });
  const store = releaseStore(dataDir);
  const newest = store.newestBootstrap();
  const where =
    store.dir === undefined
      ? ''
      : ` (remembered in ${JSON.stringify(join(store.dir, BOOTSTRAP_RELEASE_FILE))})`;
  const { verdict } = asBootstrap(
    () => checkFreshness(release, contentSha256, floor, { newest, allowSequence: allow }),
    {
      POLICY_ROLLBACK:
        sequence === null
          ? `the bootstrap is format v1 and has no signed sequence, but this agent accepted a signed bootstrap of sequence ${newest?.sequence} before${where}`
          : `the bootstrap's signed sequence ${sequence} is older than sequence ${newest?.sequence}, the newest bootstrap ` +
            `this agent accepted${where}: an older bootstrap is refused (it may still trust retired keys); to go ` +
            `back deliberately set AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO=${sequence}`,
      POLICY_SEQUENCE_REUSED:
        `the bootstrap reuses signed sequence ${sequence} for other content than the bootstrap this agent ` +
        `accepted under it${where}; ${fix}`,
    },
  );
  const pending =
    dataDir === undefined || sequence === null || verdict === 'same'
      ? undefined
      : { dataDir, release: { sequence, contentSha256 }, basis: newest ?? null };
  const floorText = floor === undefined ? 'no floor set' : `floor ${floor}`;
  const remembered = pending?.release.sequence ?? newest?.sequence;
  const state =
    dataDir === undefined
      ? `no data directory: floor only (${floorText})`
      : `${floorText}, remembered newest ${remembered ?? 'none'}`;
  return { verdict, state, newestBefore: newest?.sequence, allowDowngradeTo: allow, pending };
}

/**
 * Remembers the accepted bootstrap's release durably (fsync, rename, fsync of the directory), once start-up
 * succeeded and before anything listens; nothing when there is nothing new to remember.
 * @throws {@link AgentError} `AGENT_RELEASE_STATE_UNWRITABLE`.
 */
export function rememberBootstrapRelease(rollback: BootstrapRollback | undefined): void {
  const pending = rollback?.pending;
  if (pending !== undefined) releaseStore(pending.dataDir).rememberBootstrap(pending.release, pending.basis);
}
