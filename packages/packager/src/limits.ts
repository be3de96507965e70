import { MAX_STRING_PLAINTEXT_BYTES } from '@org/envelope-crypto';

/** Request size limits, in bytes (the packager service's README, "Limits"). */
export interface Limits {
  /** The `body` part of every multipart request. */
  bodyFieldBytes: number;
  /** A workflow: the `stream` of /workflow-package, the JSON of /workflow-compile, /workflow-hash, /build-workflows. */
  workflowBytes: number;
  /** The `stream` of /bootstrap-encrypt. */
  bootstrapBytes: number;
  /** The `stream` of /string-encrypt (at most envelope-crypto's MAX_STRING_PLAINTEXT_BYTES). */
  stringBytes: number;
  /** A whole `.oapp`: the body of /workflow-inspect and the `stream` of /package-envelope. */
  packageBytes: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/** The defaults of every limit (the Express service's when no `PACKAGER_*_BYTES` is set). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  bodyFieldBytes: 64 * KIB,
  workflowBytes: 8 * MIB,
  bootstrapBytes: 4 * MIB,
  stringBytes: MAX_STRING_PLAINTEXT_BYTES,
  packageBytes: 32 * MIB,
});

const LIMIT_NAMES = Object.keys(DEFAULT_LIMITS) as (keyof Limits)[];

/**
 * `DEFAULT_LIMITS` with `overrides` on top, each a whole number of bytes (0 or more).
 * @throws TypeError for an unknown limit name; RangeError naming the limit for a value that is not a whole number.
 */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  for (const name of Object.keys(overrides)) {
    if (!(LIMIT_NAMES as string[]).includes(name))
      throw new TypeError(`limits.${name} is not a limit (${LIMIT_NAMES.join(', ')})`);
  }
  const limits = { ...DEFAULT_LIMITS };
  for (const name of LIMIT_NAMES) {
    const value = overrides[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`limits.${name} must be a whole number of bytes, 0 or more`);
    limits[name] = value;
  }
  return limits;
}
