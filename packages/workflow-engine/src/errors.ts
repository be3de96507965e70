/** Every code an {@link EngineError} can carry (stable public API; README.md lists what each means). */
export const ENGINE_ERROR_CODES = Object.freeze([
  'ENGINE_STEP_NOT_FOUND',
  'ENGINE_INVALID_WORKFLOW',
  'ENGINE_TIMEOUT',
  'ENGINE_MEMORY',
  'ENGINE_SCRIPT_ERROR',
  'ENGINE_UNSUPPORTED',
  'ENGINE_NOT_PERMITTED',
  'ENGINE_SEND_DEPTH',
  'ENGINE_LIMIT',
  'ENGINE_SANDBOX_FAILED',
  'ENGINE_DISPOSED',
  'ENGINE_OUTBOUND_FAILED',
  'ENGINE_STEP_AMBIGUOUS',
  'ENGINE_SECRET_IN_RESPONSE',
  'ENGINE_SPLIT_DEADLINE',
  'ENGINE_NO_PERSISTENCE',
  'ENGINE_PERSISTENCE_INVALID',
  'ENGINE_PERSISTENCE_CORRUPT',
  'ENGINE_PERSISTENCE_KEY',
  'ENGINE_PERSISTENCE_LIMIT',
  'ENGINE_PERSISTENCE_FAILED',
  'ENGINE_PERSISTENCE_UNAVAILABLE',
  'ENGINE_COMPRESSION_INVALID',
  'ENGINE_COMPRESSION_LIMIT',
  'ENGINE_KEY_NOT_FOUND',
  'ENGINE_HOST_SERVED',
  'ENGINE_BAD_ARGUMENT',
] as const);

/** One of {@link ENGINE_ERROR_CODES}. */
export type EngineErrorCode = (typeof ENGINE_ERROR_CODES)[number];

/** The engine's coded error. Messages never carry registered secrets or host internals. */
export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Duck-typed guard for an {@link EngineError}: `name` and membership of {@link ENGINE_ERROR_CODES}, so it works
 * across two loaded copies of this package, where `instanceof` does not.
 */
export function isEngineError(err: unknown): err is EngineError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; code?: unknown };
  return (
    e.name === 'EngineError' &&
    typeof e.code === 'string' &&
    (ENGINE_ERROR_CODES as readonly string[]).includes(e.code)
  );
}

/** Duck-typed check for a coded error (`{ code: string, message: string }`), as the app throws them. */
export function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The message of a thrown value, without a stack. */
export function messageOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') {
    return (err as { message: string }).message;
  }
  return String(err);
}
