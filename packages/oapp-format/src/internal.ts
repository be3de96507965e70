// `@org/oapp-format/internal`: the format's building blocks, for this repository's tests, benchmarks and test
// vector generators. Not covered by semantic versioning: any release may change or remove them. The documented
// API is ./index.ts.
export {
  CHUNK_TAG_BYTES,
  FORMAT_VERSION,
  FORMAT_VERSIONS,
  HEADER_FORMAT,
  HEADER_FORMATS,
  KIND_MEDIA_TYPES,
  MAX_ENVELOPE_DEPTH,
  PAYLOAD_AEAD,
  SECTION,
  SIGNING_TYPES,
  STANZA_BYTES,
  STATEMENT_FORMAT,
  STATEMENT_FORMATS,
} from './constants.js';
export { decodeHeader, encodeHeader } from './header.js';
export type { EnvelopeLink, Header } from './header.js';
export { decodeStatement, encodeStatement, signingMessage } from './statement.js';
export type { Statement } from './statement.js';
export { decodeSignatures, encodeSignatures, signStatement, verifyRecord } from './signatures.js';
export type { SignatureRecord } from './signatures.js';
export { keyHint } from './fingerprint.js';
export { chunkNonce, derivePayloadKey, payloadLength } from './payload.js';
export { checkSignatures } from './policy.js';
export type { ParsedPackage } from './parse.js';
export { releaseOf } from './freshness.js';
export { clockSequence } from './release.js';
export type { ReleaseFields } from './release.js';
export { BOOTSTRAP_PACKAGE_ID } from './bootstrap.js';
