import type { CryptoErrorCode } from '@org/envelope-crypto';
import { codedErrorGuard, codedProblem, internalProblem } from '@org/http-problem';
import { UPLOAD_STATUS_BY_CODE, type UploadErrorCode } from '@org/multipart-limits';
import type { OappErrorCode } from '@org/oapp-format';
import type { WorkflowErrorCode } from '@org/workflow-compiler';
import type { FieldError, RequestErrorCode } from './errors.js';

/** Every code an answer can carry. A library adding a code without a status here fails typecheck. */
export type PackagerErrorCode =
  CryptoErrorCode | OappErrorCode | WorkflowErrorCode | UploadErrorCode | RequestErrorCode;

/**
 * The one code → status table (docs/engineering.md §2). 400: malformed bytes or key text; 413: over a limit;
 * 415: wrong content type; 422: well-formed JSON whose content breaks a rule; 403: a package refused by
 * the caller's own verification policy (`/package-envelope`).
 */
export const STATUS_BY_CODE = {
  // envelope-crypto: key text and key checks are 400 (S63, S64, S95, S113, S115, S116).
  CRYPTO_BAD_HEX: 400,
  CRYPTO_BAD_KEY_LENGTH: 400,
  CRYPTO_WRONG_KEY_PURPOSE: 400,
  CRYPTO_WRONG_KEY_TYPE: 400,
  CRYPTO_BAD_KEY_SPEC: 400,
  CRYPTO_KEY_MISMATCH: 400,
  CRYPTO_INVALID_PUBLIC_KEY: 400,
  CRYPTO_WEAK_KEY: 400,
  CRYPTO_AUTH_FAILED: 422,
  CRYPTO_BAD_BASE64: 400,
  CRYPTO_BAD_UTF8: 400,
  CRYPTO_BAD_PREFIX: 400,
  CRYPTO_TRUNCATED: 400,
  CRYPTO_TOO_LARGE: 413,
  CRYPTO_BAD_KEY_TUPLE: 400,
  CRYPTO_NO_MATCHING_KEY: 422,
  // oapp-format: malformed package or body bytes 400; authentic-but-wrong 422; policy 403.
  FORMAT_BAD_MAGIC: 400,
  FORMAT_VERSION_UNSUPPORTED: 400,
  FORMAT_BAD_FLAGS: 400,
  FORMAT_BAD_SECTIONS: 400,
  FORMAT_SECTION_TOO_LARGE: 400,
  FORMAT_TRUNCATED: 400,
  FORMAT_TRAILING_DATA: 400,
  FORMAT_BAD_UTF8: 400,
  FORMAT_JSON_INVALID: 400,
  FORMAT_JSON_DUPLICATE_KEY: 400,
  FORMAT_JSON_TOO_DEEP: 400,
  FORMAT_UNKNOWN_FIELD: 400,
  FORMAT_BAD_FIELD: 400,
  FORMAT_UNSUPPORTED_ALGORITHM: 400,
  FORMAT_BAD_RECIPIENTS: 400,
  FORMAT_DUPLICATE_RECIPIENT: 400,
  FORMAT_DUPLICATE_NONCE: 400,
  FORMAT_BAD_SIGNATURES: 400,
  FORMAT_TOO_MANY_SIGNATURES: 400,
  FORMAT_TOO_MANY_RECIPIENTS: 400,
  FORMAT_BAD_PAYLOAD_LENGTH: 400,
  FORMAT_PAYLOAD_TOO_LARGE: 413,
  FORMAT_STATEMENT_MISMATCH: 400,
  FORMAT_WRONG_KIND: 422,
  FORMAT_BAD_BASE64: 400,
  FORMAT_BAD_ARGUMENT: 422,
  CRYPTO_NO_MATCHING_RECIPIENT: 422,
  CRYPTO_HEADER_MISMATCH: 422,
  CRYPTO_CIPHERTEXT_MISMATCH: 422,
  CRYPTO_CONTENT_MISMATCH: 422,
  POLICY_PACKAGE_ID_MISMATCH: 403,
  POLICY_PACKAGER_NOT_TRUSTED: 403,
  POLICY_SIGNATURE_INVALID: 403,
  POLICY_REQUIRED_SIGNER_MISSING: 403,
  POLICY_SIGNER_THRESHOLD_NOT_MET: 403,
  // the freshness check of a v2 package (oapp-format SPEC.md §6 step 13a) under the caller's policy.
  POLICY_ROLLBACK: 403,
  POLICY_BELOW_MINIMUM: 403,
  POLICY_SEQUENCE_REUSED: 403,
  POLICY_EXPIRED: 403,
  POLICY_INVALID: 422,
  // workflow-compiler: syntax 400, semantics 422.
  WORKFLOW_JSON_INVALID: 400,
  WORKFLOW_JSON_BAD_UTF8: 400,
  WORKFLOW_JSON_LONE_SURROGATE: 400,
  WORKFLOW_JSON_DUPLICATE_KEY: 400,
  WORKFLOW_JSON_TOO_DEEP: 400,
  WORKFLOW_JSON_TOO_LARGE: 413,
  WORKFLOW_JSON_BAD_NUMBER: 400,
  WORKFLOW_SCHEMA_INVALID: 422,
  WORKFLOW_DUPLICATE_STEP_ID: 422,
  WORKFLOW_NOT_COMPILED: 422,
  WORKFLOW_NOT_CANONICAL: 422,
  WORKFLOW_VALUE_INVALID: 422,
  WORKFLOW_BOOTSTRAP_INVALID: 422,
  WORKFLOW_BOOTSTRAP_DUPLICATE_ID: 422,
  WORKFLOW_BOOTSTRAP_KEY_INVALID: 422,
  WORKFLOW_BOOTSTRAP_KEY_REFERENCE: 422,
  WORKFLOW_BOOTSTRAP_SIGNER_CONFLICT: 422,
  WORKFLOW_BOOTSTRAP_SIGNER_COUNT: 422,
  WORKFLOW_VARIABLE_MISSING: 422,
  WORKFLOW_VARIABLE_INVALID: 422,
  WORKFLOW_VARIABLE_TOO_LARGE: 422,
  WORKFLOW_SECRETS_FILE_INVALID: 422,
  WORKFLOW_RESOURCE_PATH_INVALID: 422,
  WORKFLOW_RESOURCE_OUTSIDE_ROOT: 422,
  WORKFLOW_RESOURCE_NOT_FOUND: 422,
  WORKFLOW_RESOURCE_TOO_LARGE: 422,
  WORKFLOW_RESOURCE_BAD_UTF8: 422,
  WORKFLOW_COMPILED_TOO_LARGE: 422,
  WORKFLOW_MANIFEST_INVALID: 422,
  WORKFLOW_MANIFEST_TOO_MANY_INCLUDES: 422,
  WORKFLOW_MANIFEST_DUPLICATE_INCLUDE: 422,
  WORKFLOW_MANIFEST_PATH_INVALID: 422,
  WORKFLOW_MANIFEST_PATH_NOT_FOUND: 422,
  WORKFLOW_MANIFEST_OP_UNKNOWN: 422,
  WORKFLOW_MANIFEST_OP_INVALID: 422,
  WORKFLOW_MANIFEST_CONFLICT: 422,
  // multipart-limits (its README's table).
  ...UPLOAD_STATUS_BY_CODE,
  // the packager's own.
  REQUEST_FIELD_INVALID: 422,
  REQUEST_UNKNOWN_KEY_ID: 422,
  REQUEST_DUPLICATE_KEY_ID: 422,
  REQUEST_ONE_RECIPIENT_REQUIRED: 422,
  REQUEST_NOT_ACCEPTABLE: 406,
  REQUEST_UNSUPPORTED_MEDIA_TYPE: 415,
  REQUEST_MISSING_PURPOSE: 400,
  REQUEST_INVALID_PURPOSE: 400,
  REQUEST_MALFORMED: 400,
  REQUEST_NOT_FOUND: 404,
  REQUEST_METHOD_NOT_ALLOWED: 405,
  // the `body` part (or a JSON body): the packager's own codes, whatever the parser.
  REQUEST_BODY_TOO_LARGE: 413,
  REQUEST_BODY_NOT_JSON: 400,
  REQUEST_BODY_DUPLICATE_KEY: 400,
  REQUEST_BODY_TOO_DEEP: 400,
  // caller authentication (ADR 0140).
  REQUEST_UNAUTHENTICATED: 401,
  REQUEST_FORBIDDEN: 403,
  REQUEST_TOKEN_CONFIG_INVALID: 500,
} as const satisfies Record<PackagerErrorCode, number>;

const isKnownCodedError = codedErrorGuard(
  ['CryptoError', 'OappError', 'WorkflowError', 'UploadError', 'RequestError'],
  STATUS_BY_CODE,
);

/** A coded error from any of our packages or the packager (duck-typed: two copies of a package may load). */
export interface CodedError {
  name: string;
  code: PackagerErrorCode;
  message: string;
  details?: unknown;
  errors?: FieldError[] | undefined;
  headers?: Record<string, string> | undefined;
  extensions?: Record<string, unknown> | undefined;
}

/** True for an error of one of our classes with a code of the status table (by shape, docs/engineering.md §2). */
export function isCodedError(err: unknown): err is CodedError {
  return isKnownCodedError(err);
}

/** An RFC 9457 body as the packager answers it (ADR 0004): the standard members, `code`, `errors`, extensions. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly instance: string;
  readonly code: string;
  readonly errors?: readonly FieldError[];
  readonly [extension: string]: unknown;
}

/** Failed fields are listed in `details.errors` as `{ pointer, detail }` (workflow-compiler); keep well-formed ones. */
function fieldErrorsOf(err: CodedError): FieldError[] | undefined {
  if (err.errors !== undefined) return err.errors;
  const details = err.details;
  if (typeof details !== 'object' || details === null) return undefined;
  const listed = (details as { errors?: unknown }).errors;
  if (!Array.isArray(listed)) return undefined;
  const list = (listed as unknown[]).filter(
    (d): d is FieldError =>
      typeof d === 'object' &&
      d !== null &&
      typeof (d as FieldError).pointer === 'string' &&
      typeof (d as FieldError).detail === 'string',
  );
  return list.length > 0 ? list.map(({ pointer, detail }) => ({ pointer, detail })) : undefined;
}

/**
 * The RFC 9457 problem body of a coded error: status from {@link STATUS_BY_CODE}, `detail` the error's safe
 * message, `instance` naming `requestId` (`urn:uuid:<id>` for a UUID).
 */
export function problemBody(err: CodedError, requestId: string): Problem {
  return codedProblem(err.code, STATUS_BY_CODE[err.code], err.message, requestId, {
    errors: fieldErrorsOf(err),
    extensions: err.extensions,
  });
}

/** The generic 500 body: nothing from the error itself, `instance` naming `requestId`. */
export function internalProblemBody(requestId: string): Problem {
  return internalProblem(requestId);
}
