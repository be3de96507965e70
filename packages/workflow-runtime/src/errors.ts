/**
 * The agent's own error codes (docs/engineering.md §2). Library codes (`WORKFLOW_*`, `FORMAT_*`, `CRYPTO_*`,
 * `POLICY_*`, `UPLOAD_*`) pass through unchanged; these cover what only the agent decides.
 */
export const AGENT_ERROR_CODES = Object.freeze([
  // start-up (each ends the process with exit code 1)
  'AGENT_CONFIG_INVALID',
  'AGENT_BOOTSTRAP_MISSING',
  'AGENT_BOOTSTRAP_UNREADABLE',
  'AGENT_BOOTSTRAP_SECRETKEY_MISSING',
  'AGENT_BOOTSTRAP_UNSIGNED',
  'AGENT_RELEASE_STATE_UNREADABLE',
  'AGENT_RELEASE_STATE_UNWRITABLE',
  'AGENT_DEPLOYMENT_KEY_INVALID',
  'AGENT_PACKAGING_MISSING',
  'AGENT_REMOTE_CONFIGURATION_UNSUPPORTED',
  'AGENT_REMOTE_CONFIGURATION_UNREADABLE',
  'AGENT_UNPACKAGED_REFUSED',
  'AGENT_TRIGGER_INVALID',
  'AGENT_TRIGGER_DUPLICATE',
  'AGENT_SECRETS_SOURCE_UNSUPPORTED',
  'AGENT_SECRETS_UNREADABLE',
  'AGENT_LISTEN_FAILED',
  'AGENT_START_FAILED',
  'AGENT_PERSISTENCE_CONFLICT',
  'AGENT_ASSET_UNREADABLE',
  'AGENT_ASSET_INVALID',
  'AGENT_FILE_ACCESS_INVALID',
  // the packager capability (ADR 0136)
  'AGENT_PACKAGER_INVALID',
  'AGENT_PACKAGER_UNAVAILABLE',
  'AGENT_PACKAGER_RESOURCES_MISSING',
  // run time
  'AGENT_RESTRICTED_DATA_FAILED',
  'AGENT_RESTRICTED_DATA_NOT_ALLOWED',
  'AGENT_ROUTE_NOT_FOUND',
  'AGENT_METHOD_NOT_ALLOWED',
  'AGENT_STEP_FAILED',
  'AGENT_STEP_NOT_FOUND',
  'AGENT_RESPONSE_INVALID',
  'AGENT_ASSET_PATH_INVALID',
  'AGENT_ASSET_NOT_FOUND',
  'AGENT_BODY_TOO_LARGE',
  'AGENT_BODY_NOT_JSON',
  'AGENT_BODY_DUPLICATE_KEY',
  'AGENT_BODY_TOO_DEEP',
  'AGENT_FILE_NOT_PERMITTED',
  'AGENT_FILE_NOT_FOUND',
  'AGENT_FILE_TOO_LARGE',
  'AGENT_FILE_FAILED',
  'AGENT_SHUTTING_DOWN',
  // calls between deployments (ADR 0079)
  'AGENT_DEPLOYMENT_ACCESS_DENIED',
  'AGENT_DEPLOYMENT_UNAVAILABLE',
  'AGENT_DEPLOYMENT_CALL_AMBIGUOUS',
] as const);
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

/**
 * The runtime's coded error, named after the agent whose wire codes (`AGENT_*`) it carries, also when `oapp test`
 * hosts the runtime (ADR 0105). Messages name variables, records, hosts and fields, never values or keys.
 */
export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Duck-typed guard for an {@link AgentError}: `name` and membership of {@link AGENT_ERROR_CODES}, so it works
 * across two loaded copies of this package, where `instanceof` does not.
 */
export function isAgentError(err: unknown): err is AgentError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'AgentError' &&
    typeof e.code === 'string' &&
    (AGENT_ERROR_CODES as readonly string[]).includes(e.code)
  );
}

/** A coded error from any of our packages, recognised by shape (two copies of a package may load). */
export interface CodedError {
  readonly name: string;
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
}

const CODED_NAMES = new Set([
  'AgentError',
  'CryptoError',
  'OappError',
  'WorkflowError',
  'UploadError',
  'PolicyError',
  'EngineError',
]);

/** True for an error of one of our classes (duck-typed on `name` and `code`). */
export function isCodedError(err: unknown): err is CodedError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as Record<string, unknown>;
  return (
    typeof e['name'] === 'string' &&
    CODED_NAMES.has(e['name']) &&
    typeof e['code'] === 'string' &&
    typeof e['message'] === 'string'
  );
}

/** The same coded error with context in front of its message (the code is what tests and operators match). */
export function withContext(err: CodedError, context: string): CodedError & Error {
  return Object.assign(new Error(`${context}: ${err.message}`, { cause: err }), {
    name: err.name,
    code: err.code,
    details: err.details,
  });
}
