import { createSha256, encodeHex, expectKey, randomBytes, wipe, type Key } from '@org/envelope-crypto';
import {
  DEFAULT_CHUNK_BYTES,
  FRAME_BYTES,
  MAX_SIGNATURES,
  SECTION_HEADER_BYTES,
  STANZA_BYTES,
} from './constants.js';
import type { PackageKind } from './constants.js';
import type { ContentInfo } from './content.js';
import {
  buildHeader,
  checkAssembleInput,
  checkKindArg,
  checkStatementArgs,
  encodePackagePrefix,
  packagerPublicHex,
  statementFor,
  type CreatePackageOptions,
  type PackageSigner,
  type PrefixInput,
} from './create.js';
import { OappError } from './errors.js';
import { encodeHeader } from './header.js';
import { sealChunks, TagLog, type ContentSource, type PassDigests } from './internal/seal-stream.js';
import { derivePayloadKey } from './payload.js';
import { encodeSignatures, signStatement, signTextBytes } from './signatures.js';
import { writerRelease, type WriterRelease } from './release.js';
import { encodeStatement } from './statement.js';

export type { ContentSource } from './internal/seal-stream.js';

/** Options of {@link createPackageStream}: those of `createPackage`, with the content as a re-readable source. */
export interface CreatePackageStreamOptions extends Omit<CreatePackageOptions, 'content'> {
  /**
   * Opens the content from its start. Called exactly twice: once to hash and seal it (the HEADER, which
   * precedes the payload, holds the SHA-256 of the content and of the ciphertext), once to emit it. Both
   * reads must yield the same bytes; a chunk must not be modified after it has been yielded.
   */
  readonly content: () => ContentSource;
}

/** Options of {@link writePackage}: those of `createPackage`, with the content as a stream of known size. */
export interface WritePackageOptions extends Omit<CreatePackageOptions, 'content'> {
  /** The content, read once. A chunk must not be modified after it has been yielded. */
  readonly content: ContentSource;
  /** The exact number of bytes `content` yields (a file's size); needed to place the payload. */
  readonly contentSize: number;
}

/** A random-access output, such as a file handle opened for writing. */
export interface PackageSink {
  /** Writes all of `bytes` at byte offset `position` of the output. */
  write(bytes: Uint8Array, position: number): void | Promise<void>;
}

/** What {@link writePackage} wrote. */
export interface WrittenPackage {
  /** Total package length in bytes. */
  readonly length: number;
  /** The content description now in HEADER and STATEMENT. */
  readonly content: ContentInfo;
}

type Random = (n: number) => Uint8Array;

/** Everything checked before the first content byte is read. */
interface Plan {
  readonly kind: PackageKind;
  readonly packageId: string;
  readonly license: Readonly<Record<string, unknown>> | undefined;
  readonly signers: readonly PackageSigner[];
  readonly packagerSecretKey: Key;
  readonly recipients: readonly Key[];
  readonly release: WriterRelease;
  readonly chunkSize: number;
  /** Derived once: the HEADER is laid out twice (its length, then its bytes). */
  readonly packagerPublicHex: string;
}

function planWrite(options: Omit<CreatePackageOptions, 'content'>): Plan {
  const kind = checkKindArg(options.kind);
  const release = writerRelease(options);
  checkStatementArgs(options.packageId, 0, options.license);
  const signers = options.signers ?? [];
  if (signers.length > MAX_SIGNATURES)
    throw new OappError(
      'FORMAT_TOO_MANY_SIGNATURES',
      `${signers.length} signatures, the limit is ${MAX_SIGNATURES}`,
    );
  for (const s of signers) {
    expectKey(s.secretKey, 'sign', 'secret', 'signers');
    signTextBytes(s.signText);
  }
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_BYTES;
  // Before the packager's public key is derived from its secret key: a wrong key gets the check's error.
  checkAssembleInput({
    packagerSecretKey: options.packagerSecretKey,
    recipients: options.recipients,
    chunkSize,
  });
  const plan: Plan = {
    kind,
    packageId: options.packageId,
    license: options.license,
    signers,
    packagerSecretKey: options.packagerSecretKey,
    recipients: options.recipients,
    release,
    chunkSize,
    packagerPublicHex: packagerPublicHex(options.packagerSecretKey),
  };
  return plan;
}

/** The STATEMENT, its signatures and the rest of the HEADER inputs, once the content digest is known. */
function prefixInput(plan: Plan, size: number, sha256Hex: string): PrefixInput {
  const statement = statementFor(plan.kind, plan.packageId, size, sha256Hex, plan.license, plan.release);
  const statementBytes = encodeStatement(statement);
  return {
    kind: plan.kind,
    statement,
    statementBytes,
    signatures: [],
    packagerSecretKey: plan.packagerSecretKey,
    recipients: plan.recipients,
    createdAt: plan.release.createdAt,
    chunkSize: plan.chunkSize,
    plaintextSize: size,
    packagerPublicHex: plan.packagerPublicHex,
  };
}

function signedInput(
  plan: Plan,
  size: number,
  digests: PassDigests,
): { input: PrefixInput; ciphertextSha256: Uint8Array } {
  const input = prefixInput(plan, size, encodeHex(digests.content.digest()));
  const signatures = plan.signers.map((s) =>
    signStatement(plan.kind, input.statementBytes, s.secretKey, s.signText, plan.release.version),
  );
  return { input: { ...input, signatures }, ciphertextSha256: digests.ciphertext.digest() };
}

/**
 * The exact length of everything before the PAYLOAD value, from the sizes alone: every digest in HEADER
 * and STATEMENT is fixed-length hex, stanzas are 112 bytes and a record's length depends only on its signText.
 */
function prefixLength(plan: Plan, size: number): number {
  const input = prefixInput(plan, size, '0'.repeat(64));
  const records = plan.signers.map((s) => ({
    publicKey: new Uint8Array(32),
    signText: s.signText,
    signature: new Uint8Array(64),
  }));
  return (
    FRAME_BYTES +
    5 * SECTION_HEADER_BYTES +
    encodeHeader(buildHeader(input, new Uint8Array(32))).length +
    input.statementBytes.length +
    STANZA_BYTES * plan.recipients.length +
    encodeSignatures(records).length
  );
}

function newDigests(): PassDigests {
  return { content: createSha256(), ciphertext: createSha256() };
}

/**
 * Creates a package as a stream of bytes, reading the content twice (SPEC.md §5.2 needs both digests in
 * HEADER, which comes before PAYLOAD): pass 1 hashes and seals the content and keeps each chunk's tag
 * (16 bytes per chunk); pass 2 seals it again under the same key and emits it, and fails before emitting
 * any chunk whose tag differs from pass 1, so no two different plaintexts are ever released under one
 * (key, nonce). Memory: one chunk, the tags, and what the source buffers. The bytes equal those of
 * `createPackage` for the same content, options and randomness. Arguments are checked before this returns.
 * If the generator throws, the bytes already produced are not a package: discard them.
 * @throws {@link OappError} `FORMAT_BAD_ARGUMENT` (also: the content changed between the two reads),
 *   `FORMAT_BAD_FIELD` (packageId), `FORMAT_TOO_MANY_RECIPIENTS`, `FORMAT_TOO_MANY_SIGNATURES`;
 *   `CryptoError` `CRYPTO_WRONG_KEY_PURPOSE`, `CRYPTO_WRONG_KEY_TYPE`, `CRYPTO_WEAK_KEY`.
 */
export function createPackageStream(
  options: CreatePackageStreamOptions,
): AsyncGenerator<Uint8Array, void, undefined> {
  return streamPackage(options, randomBytes);
}

/** Internal: {@link createPackageStream} with an injected random source (test vectors). */
export function streamPackage(
  options: CreatePackageStreamOptions,
  random: Random,
): AsyncGenerator<Uint8Array, void, undefined> {
  const plan = planWrite(options);
  if (typeof options.content !== 'function')
    throw new OappError('FORMAT_BAD_ARGUMENT', 'content must be a function that opens the content');
  return twoPasses(plan, options.content, random);
}

async function* twoPasses(
  plan: Plan,
  open: () => ContentSource,
  random: Random,
): AsyncGenerator<Uint8Array, void, undefined> {
  const fileKey = random(32);
  const payloadKey = derivePayloadKey(fileKey);
  try {
    const digests = newDigests();
    const tags = new TagLog();
    const first = sealChunks(open(), payloadKey, plan.chunkSize, undefined, digests);
    let next = await first.next();
    for (; next.done !== true; next = await first.next()) tags.push(next.value);
    const { input, ciphertextSha256 } = signedInput(plan, next.value, digests);
    const prefix = encodePackagePrefix(input, fileKey, ciphertextSha256, random);
    wipe(fileKey);
    yield prefix;
    let i = 0;
    for await (const sealed of sealChunks(open(), payloadKey, plan.chunkSize, next.value, undefined)) {
      if (!tags.matches(i++, sealed))
        throw new OappError('FORMAT_BAD_ARGUMENT', 'the content changed between the two reads');
      yield sealed;
    }
  } finally {
    wipe(fileKey);
    wipe(payloadKey);
  }
}

/**
 * Creates a package in one pass over the content into a random-access sink (a file): the payload is
 * written first, after a gap of the exact prefix length, and the prefix (whose HEADER holds both digests)
 * last, at offset 0. Memory: one chunk and what the source and sink buffer. The bytes equal those of
 * `createPackage` for the same content, options and randomness. If it rejects, what the sink holds is not
 * a package: discard it (write to a temporary file and rename it only after this resolves).
 * @throws {@link OappError} `FORMAT_BAD_ARGUMENT` (also: the content is not `contentSize` bytes),
 *   `FORMAT_BAD_FIELD` (packageId), `FORMAT_TOO_MANY_RECIPIENTS`, `FORMAT_TOO_MANY_SIGNATURES`;
 *   `CryptoError` `CRYPTO_WRONG_KEY_PURPOSE`, `CRYPTO_WRONG_KEY_TYPE`, `CRYPTO_WEAK_KEY`; whatever the sink throws.
 */
export function writePackage(options: WritePackageOptions, sink: PackageSink): Promise<WrittenPackage> {
  return writePackageWith(options, sink, randomBytes);
}

/** Internal: {@link writePackage} with an injected random source (test vectors). */
export async function writePackageWith(
  options: WritePackageOptions,
  sink: PackageSink,
  random: Random,
): Promise<WrittenPackage> {
  const plan = planWrite(options);
  const size = options.contentSize;
  if (!Number.isSafeInteger(size) || size < 0)
    throw new OappError('FORMAT_BAD_ARGUMENT', 'contentSize must be a non-negative integer');
  checkStatementArgs(plan.packageId, size, plan.license);
  const start = prefixLength(plan, size);
  const fileKey = random(32);
  const payloadKey = derivePayloadKey(fileKey);
  try {
    const digests = newDigests();
    let position = start;
    for await (const sealed of sealChunks(options.content, payloadKey, plan.chunkSize, size, digests)) {
      await sink.write(sealed, position);
      position += sealed.length;
    }
    const { input, ciphertextSha256 } = signedInput(plan, size, digests);
    const prefix = encodePackagePrefix(input, fileKey, ciphertextSha256, random);
    if (prefix.length !== start) throw new Error('internal error: the package prefix length changed');
    await sink.write(prefix, 0);
    return { length: position, content: input.statement.content };
  } finally {
    wipe(fileKey);
    wipe(payloadKey);
  }
}
