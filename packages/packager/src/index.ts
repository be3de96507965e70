export { createPackagerCapability } from './capability.js';
export type {
  HeldPackagerRequest,
  PackagerAnswer,
  PackagerCapability,
  PackagerCapabilityOptions,
} from './capability.js';
export { createPackagerOperations } from './operations.js';
export type { OperationSpec, PackagerOperations, ReadRequest } from './operations.js';
export { PACKAGER_OPERATIONS, isPackagerOperation } from './operation.js';
export type {
  KeyedForm,
  OperationEnv,
  OperationResult,
  PackagerDirs,
  PackagerOperation,
} from './operation.js';
export {
  bootstrapEncrypt,
  checkBootstrapEncryptRequest,
  exactlyOneRecipient,
  stringEncrypt,
  validateBootstrapEncryptRequest,
  validateStringEncryptRequest,
} from './operations/encrypt.js';
export {
  checkPackageRequest,
  validatePackageRequest,
  workflowPackage,
} from './operations/workflow-package.js';
export {
  packageEnvelope,
  validatePackageEnvelopeRequest,
  workflowInspect,
  type InspectRollbackVerdict,
} from './operations/packages.js';
export { INSPECT_QUERY_PARAMETERS, inspectFreshnessOf } from './inspect-query.js';
export type { InspectFreshness } from './inspect-query.js';
export { buildWorkflowsFromManifest, workflowCompile, workflowHash } from './operations/workflows.js';
export { KEY_GEN_ALIASES, KEY_GEN_PURPOSES, health, keyGen, keyGenPurpose } from './operations/key-gen.js';
export {
  OPERATION_SCOPES,
  TOKEN_PREFIX,
  TOKEN_SCOPES,
  createTokenCheck,
  newCallerToken,
  parseTokenHashes,
  tokenHash,
} from './auth.js';
export type { TokenCheck, TokenCheckOptions, TokenRecord, TokenScope } from './auth.js';
export { REQUEST_ERROR_CODES, RequestError, isRequestError } from './errors.js';
export type { FieldError, RequestErrorCode, RequestErrorOptions } from './errors.js';
export { STATUS_BY_CODE, internalProblemBody, isCodedError, problemBody } from './problems.js';
export type { CodedError, PackagerErrorCode, Problem } from './problems.js';
export { DEFAULT_LIMITS, resolveLimits } from './limits.js';
export type { Limits } from './limits.js';
export { JSON_TYPE, OCTET_STREAM, TEXT_PLAIN, negotiate } from './negotiate.js';
export {
  BUFFERED_BODY_BYTES,
  readAll,
  readForm,
  readJsonDocument,
  readOctets,
  uploadOptionsByPath,
  uploadOptionsFor,
} from './upload.js';
export type { FormUpload } from './upload.js';
export { MAX_BODY_DEPTH, bodyValidator, parseBody } from './body-json.js';
export type { BodyValidator } from './body-json.js';
export { parseKeyring, resolvePackager, resolveRecipients, resolveSigners } from './keyring.js';
export type { Keyring } from './keyring.js';
export {
  BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA,
  KEY_SCHEMA,
  PACKAGE_ENVELOPE_REQUEST_SCHEMA,
  PACKAGE_REQUEST_SCHEMA,
  PACKAGING_SCHEMA,
  RELEASE_PROPERTIES,
  SIGNER_SCHEMA,
  STRING_ENCRYPT_REQUEST_SCHEMA,
} from './request-schemas.js';
export type {
  BootstrapEncryptRequest,
  EncryptRequest,
  KeyInput,
  PackageEnvelopeRequest,
  PackageRequest,
  ReleaseRequest,
  SignerInput,
  SignerRef,
} from './request-schemas.js';
