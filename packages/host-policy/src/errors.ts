/**
 * Every code a {@link PolicyError} (or a denial returned as data) can carry. Codes are stable public API:
 * renaming or removing one is a major change. README.md lists when each is produced.
 */
export const POLICY_ERROR_CODES = Object.freeze([
  'POLICY_CONFIG_INVALID',
  'POLICY_HOST_UNKNOWN',
  'POLICY_HOST_NOT_ALLOWED',
  'POLICY_METHOD_NOT_ALLOWED',
  'POLICY_PATH_NOT_ALLOWED',
  'POLICY_PATH_ESCAPES_BASE',
  'POLICY_PATH_INVALID',
  'POLICY_HEADER_INVALID',
  'POLICY_HEADER_FORBIDDEN',
  'POLICY_PRIVATE_ADDRESS',
  'POLICY_REDIRECT_BLOCKED',
  'POLICY_TIMEOUT',
  'POLICY_RESPONSE_TOO_LARGE',
  'POLICY_CONNECT_FAILED',
] as const);

/** A code from {@link POLICY_ERROR_CODES}. */
export type PolicyErrorCode = (typeof POLICY_ERROR_CODES)[number];

/**
 * Structured context of a {@link PolicyError}: the host id (or entry index) and the rule that refused.
 * Never carries header values, restricted host data or other secrets.
 */
export interface PolicyErrorDetails {
  /** The host id the refusal concerns, when known. */
  readonly hostId?: string;
  /** Position of the host entry in the configuration (configuration errors only). */
  readonly index?: number;
  /** The configuration field that failed, e.g. `allowList[3].uriPattern` (configuration errors only). */
  readonly field?: string;
  /** Short stable name of the rule that refused, e.g. `allow-list`, `address-policy`. SPEC.md lists them. */
  readonly rule: string;
  /** Extra non-secret facts (for example the address kind for POLICY_PRIVATE_ADDRESS). */
  readonly [key: string]: unknown;
}

/** The one error class of this package: `code` says what failed; `message` never carries secrets. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  /** Structured context: host id, rule, field. Never secret. */
  readonly details?: PolicyErrorDetails;
  /**
   * @param code - the stable failure code
   * @param message - a lowercase message without secrets
   * @param options - `cause` and `details`
   */
  constructor(
    readonly code: PolicyErrorCode,
    message: string,
    options?: ErrorOptions & { details?: PolicyErrorDetails },
  ) {
    super(message, options);
    if (options?.details !== undefined) this.details = options.details;
  }
}

/**
 * Duck-typed guard for a {@link PolicyError}: `name` and membership of {@link POLICY_ERROR_CODES}, so it works
 * across two loaded copies of this package, where `instanceof` does not.
 */
export function isPolicyError(err: unknown): err is PolicyError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'PolicyError' &&
    typeof e.code === 'string' &&
    (POLICY_ERROR_CODES as readonly string[]).includes(e.code)
  );
}
