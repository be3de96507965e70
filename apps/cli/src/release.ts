import { Option, type Command } from 'commander';
import { CliError } from './errors.js';

// The release options of the commands that write a package, an encrypted bootstrap or a bootstrap signature
// (`--sequence`, `--expires-at`, `--expires-in`, `--format-version`), and the freshness options of the commands
// that judge one (`--newest`, `--now`): parsed here into oapp-format's writer and verifier options.

/** The largest release sequence (2^53 − 1, as oapp-format takes it). */
export const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

const usage = (message: string) => new CliError('CLI_USAGE', message);

/** `YYYY-MM-DDTHH:MM:SS[.sss]Z`: a UTC time as the format writes it (the milliseconds may be left out). */
const UTC_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{3})?Z$/;

/**
 * A UTC time option value.
 * @throws {@link CliError} `CLI_USAGE` naming the option.
 */
export function parseTime(value: string, flag: string): Date {
  const at = UTC_TIME.test(value) ? new Date(value) : undefined;
  const iso = at !== undefined && !Number.isNaN(at.getTime()) ? at.toISOString() : '';
  if (at === undefined || (iso !== value && iso !== value.replace(/Z$/, '.000Z')))
    throw usage(`${flag} must be a UTC time YYYY-MM-DDTHH:MM:SS[.sss]Z, like 2027-01-31T12:00:00Z`);
  return at;
}

/**
 * A release sequence option value: a whole number 0 … 2^53 − 1 in decimal digits.
 * @throws {@link CliError} `CLI_USAGE` naming the option.
 */
export function parseSequence(value: string, flag: string): number {
  const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw usage(`${flag} must be a whole number from 0 to ${MAX_SEQUENCE}`);
  return n;
}

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/**
 * `--expires-in 30d`: a duration in days, hours or minutes (1 to 999999 of them).
 * @throws {@link CliError} `CLI_USAGE`.
 */
export function parseDuration(value: string, flag: string): number {
  const m = /^([1-9][0-9]{0,5})([dhm])$/.exec(value);
  if (m === null) throw usage(`${flag} must be a whole number of days, hours or minutes: 30d, 12h, 90m`);
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** The parsed values of {@link addReleaseOptions}. */
export interface ReleaseOptionValues {
  sequence?: string;
  expiresAt?: string;
  expiresIn?: string;
  formatVersion?: string;
}

/** Writer options of oapp-format from {@link ReleaseOptionValues}. */
export interface ReleaseOptions {
  /** The creation time: one clock reading, from which `--expires-in` counts and the default sequence derives. */
  readonly createdAt: Date;
  readonly sequence?: number | undefined;
  readonly expiresAt?: Date | undefined;
  readonly formatVersion?: 1 | 2 | undefined;
}

/**
 * Adds `--sequence N`, `--expires-at TIME`, `--expires-in N(d|h|m)` and, when `formatVersion`, `--format-version`.
 * @param what what is written ("package", "bootstrap", "signature"), for the help.
 */
export function addReleaseOptions(cmd: Command, what: string, formatVersion: boolean): Command {
  cmd
    .option(
      '--sequence <n>',
      `release sequence of the ${what}, 0 to 2^53-1, signed with it${
        what === 'package' ? ': agents refuse one older than the newest they accepted' : ''
      } (default: the creation time in whole seconds since 1970)`,
    )
    .option('--expires-at <time>', `UTC time after which agents refuse the ${what} (YYYY-MM-DDTHH:MM:SSZ)`)
    .option('--expires-in <duration>', `the same, counted from now: 30d, 12h or 90m`);
  if (formatVersion) {
    cmd.addOption(
      new Option(
        '--format-version <v>',
        `format of the ${what}: 2 (default), or 1 for agents older than format 2 (no sequence, no expiry)`,
      ).choices(['1', '2']),
    );
  }
  return cmd;
}

/**
 * The writer options of the release flags, created now.
 * @throws {@link CliError} `CLI_USAGE` for a malformed value, `--expires-at` with `--expires-in`, an expiry not
 *   later than now, or `--sequence`/`--expires-*` with `--format-version 1`.
 */
export function releaseOptionsOf(o: ReleaseOptionValues, now: Date = new Date()): ReleaseOptions {
  if (o.expiresAt !== undefined && o.expiresIn !== undefined)
    throw usage('--expires-at and --expires-in exclude each other: give one');
  const formatVersion = o.formatVersion === undefined ? undefined : o.formatVersion === '1' ? 1 : 2;
  if (formatVersion === 1) {
    const given = ['--sequence', '--expires-at', '--expires-in'].filter(
      (_, i) => [o.sequence, o.expiresAt, o.expiresIn][i] !== undefined,
    );
    if (given.length > 0)
      throw usage(
        `${given.join(' and ')}: format 1 has no sequence and no expiry; leave out --format-version 1`,
      );
  }
  const sequence = o.sequence === undefined ? undefined : parseSequence(o.sequence, '--sequence');
  const expiresAt =
    o.expiresAt !== undefined
      ? parseTime(o.expiresAt, '--expires-at')
      : o.expiresIn !== undefined
        ? new Date(now.getTime() + parseDuration(o.expiresIn, '--expires-in'))
        : undefined;
  if (expiresAt !== undefined && expiresAt.getTime() <= now.getTime())
    throw usage(`--expires-at ${expiresAt.toISOString()} is not later than now (${now.toISOString()})`);
  return { createdAt: now, sequence, expiresAt, formatVersion };
}

/** Adds `--newest SEQ[:SHA256]` and `--now TIME` (what an agent remembers, and its clock). */
export function addFreshnessOptions(cmd: Command): Command {
  return cmd
    .option(
      '--newest <release>',
      'the newest release the agent accepted for this package id: SEQUENCE or SEQUENCE:SHA256 (the content sha256); gives the rollback verdict',
    )
    .option('--now <time>', "the agent's clock for the expiry check (default: now), YYYY-MM-DDTHH:MM:SSZ");
}

/** The parsed values of {@link addFreshnessOptions}. */
export interface FreshnessOptionValues {
  newest?: string;
  now?: string;
}

/** `--newest` and `--now` parsed: the remembered newest (its sha256 may be unknown) and the clock. */
export interface FreshnessFlags {
  readonly newest?: { readonly sequence: number; readonly contentSha256?: string | undefined } | undefined;
  readonly now?: Date | undefined;
}

/**
 * Parses `--newest` and `--now`.
 * @throws {@link CliError} `CLI_USAGE`.
 */
export function freshnessFlagsOf(o: FreshnessOptionValues): FreshnessFlags {
  let newest: FreshnessFlags['newest'];
  if (o.newest !== undefined) {
    const m = /^([0-9]{1,16})(?::([0-9a-fA-F]{64}))?$/.exec(o.newest);
    if (m === null)
      throw usage(
        '--newest must be SEQUENCE or SEQUENCE:SHA256 (64 hex digits), like 1767225600 or 12:9f86…',
      );
    newest = { sequence: parseSequence(m[1]!, '--newest'), contentSha256: m[2]?.toLowerCase() };
  }
  return { newest, now: o.now === undefined ? undefined : parseTime(o.now, '--now') };
}

/** True when `--newest` or `--now` was given. */
export function freshnessGiven(f: FreshnessFlags): boolean {
  return f.newest !== undefined || f.now !== undefined;
}
