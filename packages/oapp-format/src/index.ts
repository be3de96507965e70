export { OAPP_ERROR_CODES, OappError, isOappError } from './errors.js';
export type { OappErrorCode, OappErrorOptions } from './errors.js';
export {
  CHUNK_TAG_BYTES,
  DEFAULT_CHUNK_BYTES,
  DEFAULT_MAX_PLAINTEXT_BYTES,
  FORMAT_VERSION,
  HEADER_FORMAT,
  KIND_MEDIA_TYPES,
  MAGIC,
  MAX_CHUNK_BYTES,
  MAX_ENVELOPE_DEPTH,
  MAX_HEADER_BYTES,
  MAX_PACKAGE_ID_BYTES,
  MAX_RECIPIENTS,
  MAX_SIGNATURES,
  MAX_SIGN_TEXT_BYTES,
  MAX_STATEMENT_BYTES,
  MEDIA_TYPE_BOOTSTRAP,
  MEDIA_TYPE_WORKFLOW,
  MIN_CHUNK_BYTES,
  PAYLOAD_AEAD,
  SECTION,
  SIGNING_TYPES,
  STANZA_BYTES,
  STATEMENT_FORMAT,
} from './constants.js';
export type { PackageKind } from './constants.js';
export type { ContentInfo } from './content.js';
export { parseStrictJson } from './strict-json.js';
export type { ParseStrictJsonOptions } from './strict-json.js';
export { decodeHeader, encodeHeader } from './header.js';
export type { EnvelopeLink, Header } from './header.js';
export { decodeStatement, encodeStatement, signingMessage } from './statement.js';
export type { Statement } from './statement.js';
export { decodeSignatures, encodeSignatures, signStatement, verifyRecord } from './signatures.js';
export type { SignatureRecord } from './signatures.js';
export { fingerprint, keyHint } from './fingerprint.js';
export { chunkNonce, derivePayloadKey, payloadLength } from './payload.js';
export { createPackage } from './create.js';
export type { CreatePackageOptions, PackageSigner } from './create.js';
export { checkSignatures, policyFromBootstrap, trustedKey, validatePolicy } from './policy.js';
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
export type { ParsedPackage } from './parse.js';
export { inspectPackage } from './inspect.js';
export type { PackageInspection } from './inspect.js';
export { repackage } from './repackage.js';
export type { RepackageOptions } from './repackage.js';
export {
  BOOTSTRAP_PACKAGE_ID,
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
