import {
  assertStrongPublicKey,
  BOX_NONCE_BYTES,
  concatBytes,
  derivePublicKey,
  encodeHex,
  equalBytes,
  expectKey,
  randomBytes,
  sha256,
  wipe,
  type Key,
} from '@org/envelope-crypto';
import {
  DEFAULT_CHUNK_BYTES,
  FRAME_BYTES,
  HEADER_FORMATS,
  KIND_MEDIA_TYPES,
  MAX_CHUNK_BYTES,
  MAX_RECIPIENTS,
  MIN_CHUNK_BYTES,
  PAYLOAD_AEAD,
  SECTION,
  SECTION_HEADER_BYTES,
  STANZA_BYTES,
  STATEMENT_FORMATS,
  type PackageKind,
} from './constants.js';
import type { ContentInfo } from './content.js';
import { decodePackageId } from './content.js';
import { OappError } from './errors.js';
import { encodeFrame, encodeSection, encodeSectionHeader } from './frame.js';
import { encodeHeader, type EnvelopeLink, type Header } from './header.js';
import { derivePayloadKey, payloadLength, sealPayloadInto } from './payload.js';
import { keyHint } from './fingerprint.js';
import { encodeStanzas, sealStanza } from './recipients.js';
import { encodeSignatures, signStatement, type SignatureRecord } from './signatures.js';
import { writerRelease, type ReleaseOptions, type WriterRelease } from './release.js';
import { encodeStatement, statementVersion, type Statement } from './statement.js';
import { DEFAULT_MAX_PLAINTEXT_BYTES } from './constants.js';

/** A signer of a package: a `sign` secret key and the text its signature covers. */
export interface PackageSigner {
  readonly secretKey: Key;
  readonly signText: string;
}

/**
 * Options of {@link createPackage}. The release options (`sequence`, `createdAt`, `expiresAt`, `formatVersion`)
 * are those of {@link ReleaseOptions}: by default a v2 package whose sequence is the seconds since the epoch of
 * `createdAt`.
 */
export interface CreatePackageOptions extends ReleaseOptions {
  /** `app` (default) for a workflow package, `bootstrap` for an encrypted bootstrap. */
  readonly kind?: PackageKind | undefined;
  readonly packageId: string;
  /** The compiled workflow (or bootstrap) bytes. */
  readonly content: Uint8Array;
  /** The packager identity: an `authenticated` secret key. */
  readonly packagerSecretKey: Key;
  /** Recipients: `authenticated` public keys, 1 to 1024, each once. */
  readonly recipients: readonly Key[];
  /** Signers, each adding one signature over the STATEMENT. May be empty. */
  readonly signers?: readonly PackageSigner[] | undefined;
  /** An embedded license object, covered by every signature. */
  readonly license?: Readonly<Record<string, unknown>> | undefined;
  /** Payload chunk size, a power of two from 1 KiB to 1 MiB (default 64 KiB). */
  readonly chunkSize?: number | undefined;
}

/** Internal: everything needed to assemble a package around an existing or new statement. */
export interface AssembleInput {
  readonly kind: PackageKind;
  readonly statement: Statement;
  readonly statementBytes: Uint8Array;
  readonly signatures: readonly SignatureRecord[];
  readonly content: Uint8Array;
  readonly packagerSecretKey: Key;
  readonly recipients: readonly Key[];
  /** The creation time of a v1 HEADER; a v2 HEADER copies `createdAt` from the STATEMENT. */
  readonly createdAt: Date;
  readonly chunkSize: number;
  readonly envelope?: readonly EnvelopeLink[] | undefined;
  /** Source of the file key and stanza nonces. Production: the CSPRNG; test vectors inject a seeded one. */
  readonly random?: ((n: number) => Uint8Array) | undefined;
}

function badArgument(message: string): never {
  throw new OappError('FORMAT_BAD_ARGUMENT', message);
}

/** The package kind of writer options (default `app`). */
export function checkKindArg(kind: PackageKind | undefined): PackageKind {
  const k = kind ?? 'app';
  if (!Object.hasOwn(KIND_MEDIA_TYPES, k)) badArgument('kind must be "app" or "bootstrap"');
  return k;
}

/**
 * Internal: the writer's recipient checks (SPEC.md §4.4, §5.2 step 6). Each recipient is an `authenticated` public
 * key that is neither weak nor non-canonical (`CryptoError` `CRYPTO_WEAK_KEY` / `CRYPTO_INVALID_PUBLIC_KEY`, S176:
 * a non-canonical alias of a key would get a stanza under another hint), and no two recipients share a key hint
 * (`FORMAT_BAD_ARGUMENT`): readers refuse such stanzas (`FORMAT_DUPLICATE_RECIPIENT`), so a writer never makes
 * them. The same key twice is the common case of an equal hint. `hintOf` is for tests only: with the real hint a
 * collision of distinct keys cannot be produced.
 */
export function checkRecipients(
  recipients: readonly Key[],
  hintOf: (publicKey: Uint8Array) => Uint8Array = keyHint,
): void {
  if (recipients.length === 0) badArgument('a package needs at least one recipient');
  if (recipients.length > MAX_RECIPIENTS)
    throw new OappError(
      'FORMAT_TOO_MANY_RECIPIENTS',
      `${recipients.length} recipients, the limit is ${MAX_RECIPIENTS}`,
    );
  const seen = new Map<string, number>();
  recipients.forEach((r, i) => {
    expectKey(r, 'authenticated', 'public', 'encryptionKeys');
    assertStrongPublicKey('authenticated', r.bytes, r.id);
    const hint = encodeHex(hintOf(r.bytes));
    const first = seen.get(hint);
    if (first !== undefined) {
      const other = recipients[first]!;
      const details = { recipient: i, sameHintAs: first, fingerprint: hint };
      if (equalBytes(other.bytes, r.bytes))
        throw new OappError('FORMAT_BAD_ARGUMENT', `recipient ${r.id ?? i} is listed twice`, { details });
      throw new OappError(
        'FORMAT_BAD_ARGUMENT',
        `recipients ${other.id ?? first} and ${r.id ?? i} have the same key hint ${hint}; ` +
          'readers refuse two stanzas with one hint, so they cannot be recipients of one package',
        { details },
      );
    }
    seen.set(hint, i);
  });
}

function checkChunkSize(n: number): number {
  if (!Number.isSafeInteger(n) || n < MIN_CHUNK_BYTES || n > MAX_CHUNK_BYTES || (n & (n - 1)) !== 0) {
    badArgument('chunkSize must be a power of two from 1024 to 1048576');
  }
  return n;
}

/** Checks the STATEMENT inputs that do not need the content's hash. */
export function checkStatementArgs(
  packageId: string,
  size: number,
  license?: Readonly<Record<string, unknown>>,
): void {
  decodePackageId(packageId, 'packageId');
  if (size > DEFAULT_MAX_PLAINTEXT_BYTES) badArgument('content is larger than the format allows');
  if (license !== undefined && (typeof license !== 'object' || license === null || Array.isArray(license)))
    badArgument('license must be an object');
}

/**
 * Builds the STATEMENT for content of a known size and SHA-256 (checked by {@link checkStatementArgs}): v1, or v2
 * with the release fields of `release`.
 */
export function statementFor(
  kind: PackageKind,
  packageId: string,
  size: number,
  sha256Hex: string,
  license: Readonly<Record<string, unknown>> | undefined,
  release: WriterRelease,
): Statement {
  checkStatementArgs(packageId, size, license);
  const content: ContentInfo = { mediaType: KIND_MEDIA_TYPES[kind], size, sha256: sha256Hex };
  if (release.fields === undefined) return { format: STATEMENT_FORMATS[1], packageId, content, license };
  return { format: STATEMENT_FORMATS[2], packageId, ...release.fields, content, license };
}

/** Builds the STATEMENT for new content. */
export function buildStatement(
  kind: PackageKind,
  packageId: string,
  content: Uint8Array,
  license: Readonly<Record<string, unknown>> | undefined,
  release: WriterRelease,
): Statement {
  checkStatementArgs(packageId, content.length, license);
  return statementFor(kind, packageId, content.length, encodeHex(sha256(content)), license, release);
}

/**
 * Creates a signed, encrypted package (SPEC.md §5.2). Fresh file key and nonces from the CSPRNG.
 * @throws {@link OappError} `FORMAT_BAD_ARGUMENT`, `FORMAT_BAD_FIELD` (packageId), `FORMAT_TOO_MANY_RECIPIENTS`,
 *   `FORMAT_TOO_MANY_SIGNATURES`; `CryptoError` `CRYPTO_WRONG_KEY_PURPOSE`, `CRYPTO_WRONG_KEY_TYPE`, `CRYPTO_WEAK_KEY`,
 *   `CRYPTO_INVALID_PUBLIC_KEY` (a recipient key that is not canonical).
 */
export function createPackage(options: CreatePackageOptions): Uint8Array {
  const kind = checkKindArg(options.kind);
  const release = writerRelease(options);
  const statement = buildStatement(kind, options.packageId, options.content, options.license, release);
  const statementBytes = encodeStatement(statement);
  const signatures = (options.signers ?? []).map((s) =>
    signStatement(kind, statementBytes, s.secretKey, s.signText, release.version),
  );
  return assemblePackage({
    kind,
    statement,
    statementBytes,
    signatures,
    content: options.content,
    packagerSecretKey: options.packagerSecretKey,
    recipients: options.recipients,
    createdAt: release.createdAt,
    chunkSize: options.chunkSize ?? DEFAULT_CHUNK_BYTES,
  });
}

/** Internal: what {@link encodePackagePrefix} needs besides the file key and the payload digest. */
export type PrefixInput = Omit<AssembleInput, 'content' | 'random'> & {
  readonly plaintextSize: number;
  /**
   * The packager's public key in hex, when the caller derived it already (the writer lays the HEADER out twice:
   * once for its length, once for its bytes); derived from `packagerSecretKey` when absent.
   */
  readonly packagerPublicHex?: string | undefined;
};

/** Checks the writer inputs that do not depend on the content (packager key, chunk size, recipients). */
export function checkAssembleInput(
  input: Pick<AssembleInput, 'packagerSecretKey' | 'chunkSize' | 'recipients'>,
): void {
  expectKey(input.packagerSecretKey, 'authenticated', 'secret', 'packagerIdentityPrivateKey');
  // Here, not in createPackage: repackage also assembles, with a caller-chosen chunk size.
  checkChunkSize(input.chunkSize);
  checkRecipients(input.recipients);
}

/** Internal: the packager's public key in hex, as the HEADER names it (derived from its secret key). */
export function packagerPublicHex(secretKey: Key): string {
  return encodeHex(derivePublicKey(secretKey).bytes);
}

/**
 * Internal: the HEADER of a package (SPEC.md §4.2) for a given ciphertext digest. Its version follows the
 * STATEMENT's; a v2 HEADER copies the release fields from the STATEMENT (so the two never disagree).
 */
export function buildHeader(input: PrefixInput, ciphertextSha256: Uint8Array): Header {
  const { statement } = input;
  const version = statementVersion(statement);
  const release =
    version === 1
      ? { createdAt: input.createdAt.toISOString() }
      : {
          sequence: statement.sequence,
          createdAt: statement.createdAt ?? '',
          expiresAt: statement.expiresAt,
        };
  return {
    format: HEADER_FORMATS[version],
    packageId: statement.packageId,
    ...release,
    content: statement.content,
    packager: input.packagerPublicHex ?? packagerPublicHex(input.packagerSecretKey),
    recipients: input.recipients.length,
    payload: {
      aead: PAYLOAD_AEAD,
      chunkSize: input.chunkSize,
      plaintextSize: input.plaintextSize,
      ciphertextSha256: encodeHex(ciphertextSha256),
    },
    envelope: input.envelope === undefined ? undefined : { chain: input.envelope },
  };
}

/**
 * Internal: every package byte before the PAYLOAD value (SPEC.md §5.2 steps 5–7): frame, HEADER, STATEMENT,
 * RECIPIENTS, SIGNATURES and the PAYLOAD section header. Draws one stanza nonce per recipient from `random`,
 * in the caller's order, so a writer that drew the file key first produces the bytes of {@link assemblePackage}.
 */
export function encodePackagePrefix(
  input: PrefixInput,
  fileKey: Uint8Array,
  ciphertextSha256: Uint8Array,
  random: (n: number) => Uint8Array,
): Uint8Array {
  const signaturesValue = encodeSignatures(input.signatures);
  const header = buildHeader(input, ciphertextSha256);
  const headerBytes = encodeHeader(header);
  const digest = sha256(headerBytes);
  const stanzas = input.recipients.map((r) =>
    sealStanza(fileKey, digest, r.bytes, input.packagerSecretKey.bytes, random(BOX_NONCE_BYTES)),
  );
  return concatBytes(
    encodeFrame(statementVersion(input.statement)),
    encodeSection(SECTION.HEADER, headerBytes),
    encodeSection(SECTION.STATEMENT, input.statementBytes),
    encodeSection(SECTION.RECIPIENTS, encodeStanzas(stanzas)),
    encodeSection(SECTION.SIGNATURES, signaturesValue),
    encodeSectionHeader(SECTION.PAYLOAD, payloadLength(input.plaintextSize, input.chunkSize)),
  );
}

/**
 * Internal: the length of {@link encodePackagePrefix}'s output, known before the payload is sealed: the HEADER
 * holds the ciphertext digest as 64 hex digits whatever its value, and every stanza is {@link STANZA_BYTES} long.
 * Draws no randomness.
 */
function prefixLength(input: PrefixInput, signaturesValue: Uint8Array): number {
  const headerBytes = encodeHeader(buildHeader(input, new Uint8Array(32)));
  return (
    FRAME_BYTES +
    SECTION_HEADER_BYTES * 5 +
    headerBytes.length +
    input.statementBytes.length +
    STANZA_BYTES * input.recipients.length +
    signaturesValue.length
  );
}

/** Assembles frame and sections around a statement and its signatures (SPEC.md §5.2 steps 3–7). */
export function assemblePackage(input: AssembleInput): Uint8Array {
  checkAssembleInput(input);
  // Encoded (and checked) before any randomness is drawn, as before the streaming writer shared this code.
  const signaturesValue = encodeSignatures(input.signatures);
  const prefixInput: PrefixInput = {
    ...input,
    plaintextSize: input.content.length,
    // One X25519 base-point multiplication for both layouts of the HEADER below, not one each.
    packagerPublicHex: packagerPublicHex(input.packagerSecretKey),
  };
  // The package is laid out in one buffer and the payload sealed into its place: no copy of the payload.
  const offset = prefixLength(prefixInput, signaturesValue);
  const out = new Uint8Array(offset + payloadLength(input.content.length, input.chunkSize));
  const random = input.random ?? randomBytes;
  const fileKey = random(32);
  const payloadKey = derivePayloadKey(fileKey);
  try {
    const ciphertextSha256 = sealPayloadInto(payloadKey, input.content, input.chunkSize, out, offset);
    wipe(payloadKey);
    const prefix = encodePackagePrefix(prefixInput, fileKey, ciphertextSha256, random);
    if (prefix.length !== offset)
      throw new Error(`internal: package prefix is ${prefix.length} bytes, not ${offset}`);
    out.set(prefix, 0);
    return out;
  } finally {
    wipe(payloadKey);
    wipe(fileKey);
  }
}
