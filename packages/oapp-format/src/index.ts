// The documented API (README "API"). Everything else is in ./internal.ts (`@org/oapp-format/internal`, unstable).
export { OAPP_ERROR_CODES, OappError, isOappError } from './errors.js';
export type { OappErrorCode, OappErrorOptions } from './errors.js';
export {
  DEFAULT_CHUNK_BYTES,
  DEFAULT_CLOCK_SKEW_SECONDS,
  DEFAULT_FORMAT_VERSION,
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
  MAX_CLOCK_SKEW_SECONDS,
  MIN_CHUNK_BYTES,
} from './constants.js';
export type { FormatVersion, PackageKind } from './constants.js';
export type { ContentInfo } from './content.js';
export { parseStrictJson } from './strict-json.js';
export type { ParseStrictJsonOptions } from './strict-json.js';
export { fingerprint } from './fingerprint.js';
export { createPackage } from './create.js';
export type { CreatePackageOptions, PackageSigner } from './create.js';
export type { ReleaseOptions } from './release.js';
export { checkFreshness } from './freshness.js';
export type {
  FreshnessOptions,
  FreshnessVerdict,
  NewestRelease,
  PackageRelease,
  ReleaseInfo,
} from './freshness.js';
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
export type {
  InspectPackageOptions,
  PackageInspection,
  RollbackVerdict,
  SignatureStatus,
  SignerRole,
} from './inspect.js';
export { displayJson, displayText } from './display.js';
export { repackage } from './repackage.js';
export type { RepackageOptions } from './repackage.js';
export {
  MAX_BOOTSTRAP_BYTES,
  decryptBootstrap,
  encryptBootstrap,
  isEncryptedBootstrapText,
  openEncryptedBootstrap,
} from './bootstrap.js';
export type {
  BootstrapAdministrators,
  DecryptBootstrapOptions,
  EncryptBootstrapOptions,
  OpenedBootstrap,
} from './bootstrap.js';
export {
  BOOTSTRAP_SIGNATURE_FORMAT,
  MAX_BOOTSTRAP_SIGNATURE_BYTES,
  signBootstrap,
  verifyBootstrapSignature,
} from './bootstrap-signature.js';
export type {
  BootstrapSignatureInfo,
  SignBootstrapOptions,
  VerifyBootstrapSignatureOptions,
} from './bootstrap-signature.js';
export { createPackageStream, writePackage } from './create-stream.js';
export type {
  ContentSource,
  CreatePackageStreamOptions,
  PackageSink,
  WritePackageOptions,
  WrittenPackage,
} from './create-stream.js';
