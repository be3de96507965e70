import { parse as parseQuery } from 'node:querystring';
import { MAX_CLOCK_SKEW_SECONDS } from '@org/oapp-format';
import { RequestError, type FieldError } from './errors.js';

// The query of /workflow-inspect: what an agent would judge the package against (its floor, the newest release it
// remembers, its clock and skew), so the answer carries the rollback verdict `oapp inspect --newest/--now` gives.
// Read as key-gen's query is (node's querystring, as Express's simple parser): a repeated parameter is an array.
// Strict: every value is judged and an unknown parameter is refused, so a misspelt `minimumSequence` cannot
// silently drop the floor from the verdict.

/** The query parameters /workflow-inspect takes, each optional. */
export const INSPECT_QUERY_PARAMETERS = Object.freeze([
  'minimumSequence',
  'newest',
  'now',
  'clockSkewSeconds',
] as const);

/** The largest release sequence (2^53 − 1, as oapp-format takes it). */
const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

/** What the query of /workflow-inspect asks the rollback verdict against. */
export interface InspectFreshness {
  /** The deployment's floor (`packaging.minimumSequence`). */
  readonly minimumSequence?: number | undefined;
  /**
   * The newest release the agent accepted; without a digest, judged with the inspected package's own content digest
   * (a package of that very sequence is then reported with `contentCompared: false`).
   */
  readonly newest?: { readonly sequence: number; readonly contentSha256?: string | undefined } | undefined;
  /** The agent's clock for the expiry check (default: the packager's clock). */
  readonly now?: Date | undefined;
  /** Skew allowed past `expiresAt`, 0 … 86400 seconds (default 300). */
  readonly clockSkewSeconds?: number | undefined;
}

/** `YYYY-MM-DDTHH:MM:SS[.sss]Z`: a UTC time as the format writes it (the milliseconds may be left out). */
const UTC_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{3})?Z$/;
const SEQUENCE = /^[0-9]{1,16}$/;
const NEWEST = /^([0-9]{1,16})(?::([0-9a-fA-F]{64}))?$/;

const SEQUENCE_DETAIL = `must be a whole number from 0 to ${MAX_SEQUENCE}`;

function sequenceOf(text: string): number | undefined {
  const n = SEQUENCE.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

function timeOf(text: string): Date | undefined {
  if (!UTC_TIME.test(text)) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return undefined;
  // The pattern admits 2026-02-30: the instant must name the same text back.
  const iso = at.toISOString();
  return iso === text || iso === text.replace(/Z$/, '.000Z') ? at : undefined;
}

/** A parameter's name as an answer shows it: cut to 64 characters, anything but printable ASCII as `?`. */
function shown(name: string): string {
  return name.slice(0, 64).replace(/[^\x20-\x7e]/g, '?');
}

/** An RFC 6901 pointer to a parameter (what a problem's `errors` names). */
function pointerOf(name: string): string {
  return `/${shown(name).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

type Parsed = { -readonly [K in keyof InspectFreshness]: InspectFreshness[K] };

/** Judges one known parameter's value into `out`; the failure's detail, or undefined. */
function judge(
  name: (typeof INSPECT_QUERY_PARAMETERS)[number],
  value: string,
  out: Parsed,
): string | undefined {
  switch (name) {
    case 'minimumSequence':
      out.minimumSequence = sequenceOf(value);
      return out.minimumSequence === undefined ? SEQUENCE_DETAIL : undefined;
    case 'newest': {
      const m = NEWEST.exec(value);
      const sequence = m === null ? undefined : sequenceOf(m[1]!);
      if (m === null || sequence === undefined)
        return `must be SEQUENCE or SEQUENCE:SHA256 (a whole number from 0 to ${MAX_SEQUENCE}, then 64 hex digits of the content sha256)`;
      out.newest = { sequence, contentSha256: m[2]?.toLowerCase() };
      return undefined;
    }
    case 'now':
      out.now = timeOf(value);
      return out.now === undefined
        ? 'must be a UTC time YYYY-MM-DDTHH:MM:SS[.sss]Z, like 2027-01-31T12:00:00Z'
        : undefined;
    case 'clockSkewSeconds': {
      const n = /^[0-9]{1,5}$/.test(value) ? Number(value) : Number.NaN;
      if (!(n <= MAX_CLOCK_SKEW_SECONDS)) return `must be a whole number from 0 to ${MAX_CLOCK_SKEW_SECONDS}`;
      out.clockSkewSeconds = n;
      return undefined;
    }
  }
}

/**
 * The freshness inputs of a /workflow-inspect query string (without the `?`); undefined when it names none (the
 * answer's `rollback` is then `null`).
 * @throws RequestError `REQUEST_FIELD_INVALID` naming every failing parameter (a malformed or repeated value, an
 *   unknown parameter) by pointer `/<name>`; the message names the first.
 */
export function inspectFreshnessOf(query: string | null | undefined): InspectFreshness | undefined {
  const params = parseQuery(query ?? '');
  const names = Object.keys(params);
  if (names.length === 0) return undefined;
  const out: Parsed = {};
  const errors: FieldError[] = [];
  let firstName = '';
  for (const name of names) {
    const value = params[name];
    const known = (INSPECT_QUERY_PARAMETERS as readonly string[]).includes(name)
      ? (name as (typeof INSPECT_QUERY_PARAMETERS)[number])
      : undefined;
    const detail =
      known === undefined
        ? `is not a known parameter (${INSPECT_QUERY_PARAMETERS.join(', ')})`
        : typeof value !== 'string'
          ? 'must appear once'
          : judge(known, value, out);
    if (detail === undefined) continue;
    if (errors.length === 0) firstName = name === '' ? '(empty name)' : shown(name);
    errors.push({ pointer: pointerOf(name), detail });
  }
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new RequestError('REQUEST_FIELD_INVALID', `query parameter ${firstName} ${first.detail}`, {
      errors,
    });
  }
  return out;
}
