import { type FormatVersion, FORMAT_VERSIONS, DEFAULT_FORMAT_VERSION } from './constants.js';
import { OappError } from './errors.js';
import { expectSize, expectTimestamp, type JsonObject } from './internal/fields.js';

// The release fields of format v2 (SPEC.md §4.2, §4.3): `sequence`, `createdAt` and the optional `expiresAt`, in
// both HEADER and STATEMENT, and the writer options that produce them.

/** The release fields a v2 HEADER and STATEMENT both carry (SPEC.md §4.2). */
export interface ReleaseFields {
  /** The release sequence: an integer 0 … 2^53 − 1. Rollback is decided on it. */
  readonly sequence: number;
  /** `YYYY-MM-DDTHH:MM:SS.sssZ`. */
  readonly createdAt: string;
  /** `YYYY-MM-DDTHH:MM:SS.sssZ`, strictly after `createdAt`; absent when the release does not expire. */
  readonly expiresAt?: string | undefined;
}

/** Names of the v2 release members, in the order writers emit them. */
export const RELEASE_MEMBERS = ['sequence', 'createdAt'] as const;

/**
 * Reads and checks the release members of a v2 HEADER or STATEMENT object (already checked for unknown members).
 * @throws {@link OappError} `FORMAT_BAD_FIELD` (a sequence out of range, a malformed time, `expiresAt` not after
 *   `createdAt`).
 */
export function decodeRelease(o: JsonObject): ReleaseFields {
  const sequence = expectSize(o['sequence'], '/sequence');
  const createdAt = expectTimestamp(o['createdAt'], '/createdAt');
  if (o['expiresAt'] === undefined) return { sequence, createdAt };
  const expiresAt = expectTimestamp(o['expiresAt'], '/expiresAt');
  // Same fixed-width form: string order is time order.
  if (!(expiresAt > createdAt))
    throw new OappError('FORMAT_BAD_FIELD', '/expiresAt: must be after /createdAt', {
      details: { field: '/expiresAt' },
    });
  return { sequence, createdAt, expiresAt };
}

/** The release members of a v2 object, in the writers' order (`expiresAt` only when present). */
export function encodeRelease(r: ReleaseFields): JsonObject {
  const o: JsonObject = { sequence: r.sequence, createdAt: r.createdAt };
  if (r.expiresAt !== undefined) o['expiresAt'] = r.expiresAt;
  return o;
}

/** True when two release descriptions are identical (`expiresAt` absent on both, or equal). */
export function sameRelease(a: Partial<ReleaseFields>, b: Partial<ReleaseFields>): boolean {
  return a.sequence === b.sequence && a.createdAt === b.createdAt && a.expiresAt === b.expiresAt;
}

/** Writer options that shape the release (createPackage, createPackageStream, writePackage, encryptBootstrap). */
export interface ReleaseOptions {
  /**
   * The release sequence of a v2 package: an integer 0 … 2^53 − 1. Default: the whole seconds since the Unix epoch
   * of `createdAt` (a clock-derived sequence: later packages of one packager get higher numbers as long as its
   * clock does not go back). Not allowed with `formatVersion: 1`.
   */
  readonly sequence?: number | undefined;
  /** When the package stops being accepted (v2 only): a `Date` or an RFC 3339 time; after `createdAt`. */
  readonly expiresAt?: Date | string | undefined;
  /** The frame version to write: 2 (default) or 1 (only to serve readers that know no other; no release fields). */
  readonly formatVersion?: FormatVersion | undefined;
  /** Creation time (default: now). */
  readonly createdAt?: Date | undefined;
}

/** What a writer puts in HEADER and STATEMENT about the release. */
export interface WriterRelease {
  readonly version: FormatVersion;
  /** The creation time, also in a v1 HEADER. */
  readonly createdAt: Date;
  /** v2 only. */
  readonly fields: ReleaseFields | undefined;
}

function badArgument(message: string): never {
  throw new OappError('FORMAT_BAD_ARGUMENT', message);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,3})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** True when the date and time fields of an RFC 3339 match name a real calendar time (no rollover, no leap second). */
function validFields(m: RegExpExecArray): boolean {
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1] ?? 0;
  const offsetOk = m[7] === undefined || (Number(m[7]) <= 23 && Number(m[8]) <= 59);
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days && h <= 23 && mi <= 59 && s <= 59 && offsetOk;
}

/** A time of the format's range (years 0000–9999), as the format writes it. */
function timeArg(v: Date | string, name: string): string {
  let d: Date;
  if (typeof v === 'string') {
    const m = RFC3339.exec(v);
    if (m === null || !validFields(m))
      badArgument(`${name} must be an RFC 3339 time like 2027-01-31T12:00:00Z`);
    d = new Date(v);
  } else if (v instanceof Date) d = v;
  else return badArgument(`${name} must be a Date or an RFC 3339 time`);
  const t = d.getTime();
  if (Number.isNaN(t)) badArgument(`${name} is not a valid time`);
  const iso = d.toISOString();
  if (!/^\d{4}-/.test(iso)) badArgument(`${name} must be in the years 0000 to 9999`);
  return iso;
}

/**
 * Checks a writer's release options (SPEC.md §5.2 step 2).
 * @throws {@link OappError} `FORMAT_BAD_ARGUMENT`.
 */
export function writerRelease(options: ReleaseOptions): WriterRelease {
  const version = options.formatVersion ?? DEFAULT_FORMAT_VERSION;
  if (!(FORMAT_VERSIONS as readonly unknown[]).includes(version)) badArgument('formatVersion must be 1 or 2');
  const createdAt = options.createdAt ?? new Date();
  const created = timeArg(createdAt, 'createdAt');
  if (version === 1) {
    if (options.sequence !== undefined || options.expiresAt !== undefined)
      badArgument('sequence and expiresAt need format version 2 (formatVersion: 1 has no release fields)');
    return { version, createdAt, fields: undefined };
  }
  const sequence = options.sequence ?? clockSequence(createdAt);
  if (!Number.isSafeInteger(sequence) || sequence < 0)
    badArgument('sequence must be an integer from 0 to 9007199254740991');
  if (options.expiresAt === undefined)
    return { version, createdAt, fields: { sequence, createdAt: created } };
  const expiresAt = timeArg(options.expiresAt, 'expiresAt');
  if (!(expiresAt > created)) badArgument('expiresAt must be after createdAt');
  return { version, createdAt, fields: { sequence, createdAt: created, expiresAt } };
}

/** The default sequence: whole seconds since the Unix epoch of `createdAt` (SPEC.md §5.2). */
export function clockSequence(createdAt: Date): number {
  return Math.max(0, Math.floor(createdAt.getTime() / 1000));
}
