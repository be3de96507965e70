import {
  createSha256,
  decodeHex,
  derivePublicKey,
  equalBytes,
  expectKey,
  isCryptoError,
  wipe,
  type Key,
} from '@org/envelope-crypto';
import { CHUNK_TAG_BYTES, type PackageKind } from './constants.js';
import { OappError } from './errors.js';
import { ByteReader } from './internal/byte-reader.js';
import { readPackagePrefix, type ParsedPackage } from './parse.js';
import { chunkCount, chunkPlaintextLength, derivePayloadKey, openChunk } from './payload.js';
import {
  checkPackageId,
  checkPackager,
  checkSignatures,
  validatePolicy,
  type DeploymentPolicy,
  type SignerReport,
  type TrustedKey,
} from './policy.js';
import { openStanza } from './recipients.js';
import {
  checkFreshness,
  freshnessInputs,
  releaseOf,
  type FreshnessOptions,
  type PackageRelease,
} from './freshness.js';

/** Options of {@link verifyPackage}. */
export interface VerifyPackageOptions {
  readonly policy: DeploymentPolicy;
  /** Expected kind (default `app`). */
  readonly kind?: PackageKind | undefined;
  /** Largest plaintext accepted. */
  readonly maxPlaintextBytes?: number | undefined;
  /**
   * Rollback and freeze inputs (SPEC.md §6 step 13a): the newest release accepted before, the clock, the skew and
   * the operator's allowed downgrade. Without it the policy's floor and the package's `expiresAt` (against the
   * current time, 300 s of skew unless the policy says otherwise) are still checked.
   */
  readonly freshness?: FreshnessOptions | undefined;
}

/** Options of {@link openPackage} and {@link openPackageStream}. */
export interface OpenPackageOptions extends VerifyPackageOptions {
  /** This deployment's `authenticated` secret key. */
  readonly recipientSecretKey: Key;
}

/** A package whose frame, policy and signatures have been verified. */
export interface VerifiedPackage {
  readonly parsed: ParsedPackage;
  readonly packager: TrustedKey;
  readonly signers: SignerReport;
  /**
   * The release (format version, sequence, times) and the freshness verdict. A consumer that remembers the newest
   * release records `{ sequence, contentSha256 }` only after the whole package opened (SPEC.md §6 step 15).
   */
  readonly release: PackageRelease;
}

/** A fully verified, decrypted package. */
export interface OpenedPackage extends VerifiedPackage {
  readonly content: Uint8Array;
}

/** A verified package whose payload is still to be streamed. */
export interface OpenedPackageStream extends VerifiedPackage {
  /**
   * Verified plaintext chunks, in order. Each chunk's tag is checked before it is yielded, but the
   * package as a whole (ciphertext hash, content hash, no trailing bytes) is only proven when the
   * generator returns normally: write to a temporary place and install only after that. The final
   * chunk is yielded only after those checks passed.
   */
  readonly chunks: AsyncGenerator<Uint8Array, void, undefined>;
}

type Source = Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

function readerOf(source: Source): ByteReader {
  return new ByteReader(source instanceof Uint8Array ? [source] : source);
}

type Prefix = Omit<VerifiedPackage, 'release'> & { readonly freshness: FreshnessOptions };

async function verifyPrefix(r: ByteReader, options: VerifyPackageOptions): Promise<Prefix> {
  // SPEC.md §6 steps 1–7.
  const parsed = await readPackagePrefix(r, {
    kind: options.kind ?? 'app',
    maxPlaintextBytes: options.maxPlaintextBytes,
  });
  // Step 8: the policy and the freshness inputs (§6.1) are the verifier's own; a defect is POLICY_INVALID (or
  // the key's code), after the package's own defects and before any decision about the package.
  validatePolicy(options.policy);
  const freshness = freshnessInputs(options.policy, options.freshness);
  // SPEC.md §6 steps 9–12: policy decisions come before any stanza is opened.
  checkPackageId(options.policy, parsed.header);
  const packager = checkPackager(options.policy, hexBytes(parsed.header.packager));
  const signers = checkSignatures(
    options.policy,
    parsed.kind,
    parsed.statementBytes,
    parsed.signatures,
    parsed.version,
  );
  return { parsed, packager, signers, freshness };
}

/** SPEC.md §6 step 13a: the freshness check on the authenticated release fields, with the policy's defaults. */
function freshnessOf(p: Prefix, options: VerifyPackageOptions): VerifiedPackage {
  const { freshness, ...verified } = p;
  const release = checkFreshness(
    releaseOf(p.parsed.header),
    p.parsed.header.content.sha256,
    options.policy.minimumSequence,
    freshness,
  );
  return { ...verified, release };
}

function hexBytes(hex: string): Uint8Array {
  return decodeHex(hex, 32);
}

/**
 * Verifies a package against a deployment policy without decrypting it (SPEC.md §6 steps 1–12, then the freshness
 * check of step 13a on the release fields, which in v2 the STATEMENT's signatures cover; no stanza is opened, so
 * for a package that no signer is required to sign they are not authenticated here).
 * @throws {@link OappError} `FORMAT_*`, `CRYPTO_WEAK_KEY`, `POLICY_*`.
 */
export async function verifyPackage(source: Source, options: VerifyPackageOptions): Promise<VerifiedPackage> {
  const r = readerOf(source);
  try {
    return freshnessOf(await verifyPrefix(r, options), options);
  } finally {
    await r.close();
  }
}

function fileKeyFor(v: Prefix, recipientSecretKey: Key): Uint8Array {
  expectKey(recipientSecretKey, 'authenticated', 'secret', 'recipientSecretKey');
  const mine = derivePublicKey(recipientSecretKey).bytes;
  return openStanza(
    v.parsed.stanzas,
    v.parsed.headerSha256,
    mine,
    recipientSecretKey.bytes,
    v.packager.publicKey,
  );
}

async function* decryptChunks(
  r: ByteReader,
  v: VerifiedPackage,
  payloadKey: Uint8Array,
): AsyncGenerator<Uint8Array, void, undefined> {
  const { header } = v.parsed;
  const { chunkSize, plaintextSize } = header.payload;
  const n = chunkCount(plaintextSize, chunkSize);
  const ciphertextHash = createSha256();
  const contentHash = createSha256();
  let last: Uint8Array = new Uint8Array(0);
  try {
    for (let i = 0; i < n; i++) {
      const sealed = await r.readExact(
        chunkPlaintextLength(i, n, plaintextSize, chunkSize) + CHUNK_TAG_BYTES,
        `payload chunk ${i}`,
      );
      ciphertextHash.update(sealed);
      const plain = openPayloadChunk(payloadKey, i, i === n - 1, sealed);
      contentHash.update(plain);
      if (i < n - 1) yield plain;
      else last = plain;
    }
    if (!(await r.atEnd()))
      throw new OappError('FORMAT_TRAILING_DATA', 'bytes follow the final payload chunk');
    finalChecks(v, ciphertextHash.digest(), contentHash.digest());
    wipe(payloadKey);
    await r.close();
    // Held back until SPEC.md §6 step 15 has passed: a consumer that received plaintextSize bytes received
    // verified content, and a failed package never delivers its last chunk.
    yield last;
  } finally {
    wipe(payloadKey);
    await r.close();
  }
}

function openPayloadChunk(
  payloadKey: Uint8Array,
  i: number,
  isFinal: boolean,
  sealed: Uint8Array,
): Uint8Array {
  try {
    return openChunk(payloadKey, i, isFinal, sealed);
  } catch (cause) {
    if (isCryptoError(cause))
      throw new OappError('CRYPTO_AUTH_FAILED', 'a payload chunk does not authenticate', { cause });
    throw cause;
  }
}

function finalChecks(v: VerifiedPackage, ciphertextSha256: Uint8Array, contentSha256: Uint8Array): void {
  const { header } = v.parsed;
  if (!equalBytes(ciphertextSha256, hexBytes(header.payload.ciphertextSha256))) {
    throw new OappError(
      'CRYPTO_CIPHERTEXT_MISMATCH',
      'the payload is not the one HEADER describes (ciphertext hash differs)',
    );
  }
  if (!equalBytes(contentSha256, hexBytes(header.content.sha256))) {
    throw new OappError(
      'CRYPTO_CONTENT_MISMATCH',
      'the decrypted content does not match its declared SHA-256',
    );
  }
}

/**
 * Verifies, then opens a package from a stream with bounded memory (one chunk at a time).
 * Resolves once everything before the payload is verified and this deployment's stanza is open.
 * @throws {@link OappError} `FORMAT_*`, `CRYPTO_*`, `POLICY_*` (the chunk generator throws the
 *   payload errors: `FORMAT_TRUNCATED`, `FORMAT_TRAILING_DATA`, `CRYPTO_AUTH_FAILED`,
 *   `CRYPTO_CIPHERTEXT_MISMATCH`, `CRYPTO_CONTENT_MISMATCH`).
 */
export async function openPackageStream(
  source: Source,
  options: OpenPackageOptions,
): Promise<OpenedPackageStream> {
  const r = readerOf(source);
  try {
    const prefix = await verifyPrefix(r, options);
    const fileKey = fileKeyFor(prefix, options.recipientSecretKey);
    // Step 13a: after the stanza opened (the HEADER is authenticated), before any payload byte is read.
    let v: VerifiedPackage;
    try {
      v = freshnessOf(prefix, options);
    } catch (err) {
      wipe(fileKey);
      throw err;
    }
    const payloadKey = derivePayloadKey(fileKey);
    wipe(fileKey);
    return { ...v, chunks: decryptChunks(r, v, payloadKey) };
  } catch (err) {
    await r.close();
    throw err;
  }
}

/** Receives the plaintext of {@link openPackageToSink}, chunk by chunk, in order. */
export type PlaintextSink = (chunk: Uint8Array) => void | Promise<void>;

/**
 * Verifies, then opens a package from a stream into `sink` with bounded memory (one chunk at a time), and
 * resolves only when the whole package is proven (SPEC.md §6 step 15). The sink receives each chunk after its
 * tag verified and the final chunk only after every whole-package check, so it holds `plaintextSize` bytes
 * only for a verified package. On rejection what the sink received is unverified: discard it (write to a
 * temporary file; rename it into place only after this resolves).
 * @throws {@link OappError} `FORMAT_*`, `CRYPTO_*`, `POLICY_*`; whatever the sink throws.
 */
export async function openPackageToSink(
  source: Source,
  options: OpenPackageOptions,
  sink: PlaintextSink,
): Promise<VerifiedPackage> {
  const { chunks, ...verified } = await openPackageStream(source, options);
  for await (const chunk of chunks) await sink(chunk);
  return verified;
}

/**
 * Verifies and opens a whole package in memory, through the same steps as
 * {@link openPackageStream}; the content is returned only when every check has passed (SPEC.md §6).
 * @throws {@link OappError} `FORMAT_*`, `CRYPTO_*`, `POLICY_*`.
 */
export async function openPackage(source: Source, options: OpenPackageOptions): Promise<OpenedPackage> {
  const opened = await openPackageStream(source, options);
  const content = new Uint8Array(opened.parsed.header.payload.plaintextSize);
  let off = 0;
  for await (const chunk of opened.chunks) {
    content.set(chunk, off);
    off += chunk.length;
  }
  const { chunks: _chunks, ...verified } = opened;
  return { ...verified, content };
}
