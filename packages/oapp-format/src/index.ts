// The documented API (README "API"). Everything else is in ./internal.ts (`@org/oapp-format/internal`, unstable).
export { OAPP_ERROR_CODES, OappError, isOappError } from './errors.js';
export type { OappErrorCode, OappErrorOptions } from './errors.js';
export {
  DEFAULT_CHUNK_BYTES,
  DEFAULT_MAX_PLAINTEXT_BYTES,
  MAGIC,
  MAX_CHUNK_BYTES,
  MAX_HEADER_BYTES,
  MAX_PACKAGE_ID_BYTES,
  MAX_RECIPIENTS,
  MAX_SIGNATURES,
  MAX_SIGN_TEXT_BYTES,
  MAX_STATEMENT_BYTES,
  MEDIA_TYPE_BOOTSTRAP,
  MEDIA_TYPE_WORKFLOW,
  MIN_CHUNK_BYTES,
} from './constants.js';
export type { PackageKind } from './constants.js';
export type { ContentInfo } from './content.js';
export { parseStrictJson } from './strict-json.js';
export type { ParseStrictJsonOptions } from './strict-json.js';
export { fingerprint } from './fingerprint.js';
export { createPackage } from './create.js';
export type { CreatePackageOptions, PackageSigner } from './create.js';
export { policyFromBootstrap, trustedKey, validatePolicy } from './policy.js';
export type { DeploymentPolicy, PackagingBlock, SignerReport, TrustedKey } from './policy.js';
export { openPackage, openPackageStream, openPackageToSink, verifyPackage } from './open.js';
export type {
  OpenPackageOptions,
  OpenedPackage,
  OpenedPackageStream,
  PlaintextSink,
  VerifiedPackage,
  VerifyPackageOptions,
} from './open.js';
export { inspectPackage } from './inspect.js';
export type { InspectPackageOptions, PackageInspection, SignatureStatus, SignerRole } from './inspect.js';
export { displayJson, displayText } from './display.js';
export { repackage } from './repackage.js';
export type { RepackageOptions } from './repackage.js';
export {
  MAX_BOOTSTRAP_BYTES,
  decryptBootstrap,
  encryptBootstrap,
  isEncryptedBootstrapText,
} from './bootstrap.js';
export type { EncryptBootstrapOptions } from './bootstrap.js';
export { createPackageStream, writePackage } from './create-stream.js';
export type {
  ContentSource,
  CreatePackageStreamOptions,
  PackageSink,
  WritePackageOptions,
  WrittenPackage,
} from './create-stream.js';
