/**
 * The packager's own error codes (prefix `REQUEST_`): request shapes the other libraries do not judge. Their
 * errors (`FORMAT_*`, `CRYPTO_*`, `POLICY_*`, `WORKFLOW_*`, `UPLOAD_*`) pass through with their own codes.
 * `REQUEST_MALFORMED`, `REQUEST_NOT_FOUND` and `REQUEST_METHOD_NOT_ALLOWED` are a front-end's routing answers.
 */
export const REQUEST_ERROR_CODES = [
  /** The `body` part (or a JSON body) breaks the documented request schema: wrong type, missing or unknown field. */
  'REQUEST_FIELD_INVALID',
  /** A key id referenced by a field is not in `keys`. */
  'REQUEST_UNKNOWN_KEY_ID',
  /** Two entries of `keys` share an id. */
  'REQUEST_DUPLICATE_KEY_ID',
  /** `/string-encrypt` got more or fewer than one `encryptionKeys` id. */
  'REQUEST_ONE_RECIPIENT_REQUIRED',
  /** The `Accept` header excludes every media type the endpoint can produce. */
  'REQUEST_NOT_ACCEPTABLE',
  /** The request's media type is not one the endpoint takes (e.g. JSON to `/workflow-inspect`). */
  'REQUEST_UNSUPPORTED_MEDIA_TYPE',
  /** `GET /key-gen` without `purpose`. */
  'REQUEST_MISSING_PURPOSE',
  /** `GET /key-gen` with a purpose that is not one of the allowed values. */
  'REQUEST_INVALID_PURPOSE',
  /** A request the HTTP front-end itself could not read (e.g. a malformed percent-encoding in the path). */
  'REQUEST_MALFORMED',
  /** No route has this path. */
  'REQUEST_NOT_FOUND',
  /** The path exists, the method does not (answered with `Allow`). */
  'REQUEST_METHOD_NOT_ALLOWED',
  /** The `body` part (or a JSON body) is over its byte limit. */
  'REQUEST_BODY_TOO_LARGE',
  /** The `body` part is not strict JSON: malformed, not UTF-8, a lone surrogate, an inexact number. */
  'REQUEST_BODY_NOT_JSON',
  /** The `body` part names a key twice in one object. */
  'REQUEST_BODY_DUPLICATE_KEY',
  /** The `body` part nests deeper than 64 levels. */
  'REQUEST_BODY_TOO_DEEP',
  /** No bearer token, another scheme, or a token that matches no configured hash (answered with `WWW-Authenticate`). */
  'REQUEST_UNAUTHENTICATED',
  /** A known bearer token without the scope the operation needs. */
  'REQUEST_FORBIDDEN',
  /** The token configuration holds something other than a sha256 hash record (refused at start, never answered). */
  'REQUEST_TOKEN_CONFIG_INVALID',
] as const;

/** A code from {@link REQUEST_ERROR_CODES}. */
export type RequestErrorCode = (typeof REQUEST_ERROR_CODES)[number];

/** One failed field of a request (RFC 6901 pointer into the JSON it names). */
export interface FieldError {
  pointer: string;
  detail: string;
}

/** Options of a {@link RequestError}. */
export interface RequestErrorOptions extends ErrorOptions {
  errors?: FieldError[];
  /** Extra response headers (e.g. `Allow`). */
  headers?: Record<string, string>;
  /** Extra problem members (key-gen's compatibility `ok`/`error`). */
  extensions?: Record<string, unknown>;
}

/** The packager's one error class. Messages name the field and key id, never key material. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly extensions: Record<string, unknown> | undefined;
  constructor(
    readonly code: RequestErrorCode,
    message: string,
    options?: RequestErrorOptions,
  ) {
    super(message, options);
    this.errors = options?.errors;
    this.headers = options?.headers;
    this.extensions = options?.extensions;
  }
}

/** True for a {@link RequestError} of any loaded copy of this package (by `name` and code list, not `instanceof`). */
export function isRequestError(err: unknown): err is RequestError {
  if (typeof err !== 'object' || err === null) return false;
  const { name, code } = err as { name?: unknown; code?: unknown };
  return name === 'RequestError' && (REQUEST_ERROR_CODES as readonly unknown[]).includes(code);
}
