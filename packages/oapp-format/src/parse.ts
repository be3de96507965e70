import { sha256 } from '@org/envelope-crypto';
import { DEFAULT_MAX_PLAINTEXT_BYTES, SECTION, type FormatVersion, type PackageKind } from './constants.js';
import { kindOfMediaType, sameContent } from './content.js';
import { OappError } from './errors.js';
import { readFrame, readSection, readSectionHeader } from './frame.js';
import { decodeHeader, type Header } from './header.js';
import type { ByteReader } from './internal/byte-reader.js';
import { payloadLength } from './payload.js';
import { sameRelease } from './release.js';
import { decodeStanzas, type Stanza } from './recipients.js';
import { decodeSignatures, type SignatureRecord } from './signatures.js';
import { decodeStatement, type Statement } from './statement.js';

/** Everything before the payload, parsed and cross-checked; nothing verified against keys yet. */
export interface ParsedPackage {
  /** The frame version (SPEC.md §3.1): 1 or 2. */
  readonly version: FormatVersion;
  readonly kind: PackageKind;
  readonly headerBytes: Uint8Array;
  readonly headerSha256: Uint8Array;
  readonly header: Header;
  readonly statementBytes: Uint8Array;
  readonly statement: Statement;
  readonly stanzas: readonly Stanza[];
  readonly signatures: readonly SignatureRecord[];
  /** Declared (and checked) PAYLOAD length. */
  readonly payloadLength: number;
}

/** Options for parsing. */
export interface ParseOptions {
  /** The kind the caller expects; a package of another kind is `FORMAT_WRONG_KIND` (S60). */
  kind?: PackageKind | undefined;
  /** Largest plaintext accepted (default and ceiling: DEFAULT_MAX_PLAINTEXT_BYTES). */
  maxPlaintextBytes?: number | undefined;
}

function checkKind(header: Header, expected: PackageKind | undefined): PackageKind {
  const kind = kindOfMediaType(header.content.mediaType) ?? 'app';
  if (expected !== undefined && kind !== expected) {
    throw new OappError('FORMAT_WRONG_KIND', `expected a ${expected} package, got a ${kind} package`, {
      details: { expected, found: kind },
    });
  }
  return kind;
}

function checkStatement(version: FormatVersion, header: Header, statement: Statement): void {
  if (statement.packageId !== header.packageId || !sameContent(statement.content, header.content)) {
    throw new OappError('FORMAT_STATEMENT_MISMATCH', 'STATEMENT and HEADER disagree on packageId or content');
  }
  // v2 (S171): the signed release fields and the HEADER's are one and the same.
  if (version === 2 && !sameRelease(statement, header)) {
    throw new OappError(
      'FORMAT_STATEMENT_MISMATCH',
      'STATEMENT and HEADER disagree on sequence, createdAt or expiresAt',
    );
  }
}

async function readPayloadLength(r: ByteReader, header: Header): Promise<number> {
  const declared = await readSectionHeader(r, SECTION.PAYLOAD);
  const expected = payloadLength(header.payload.plaintextSize, header.payload.chunkSize);
  if (declared < expected)
    throw new OappError('FORMAT_TRUNCATED', `PAYLOAD is ${declared} bytes, HEADER requires ${expected}`);
  if (declared > expected)
    throw new OappError('FORMAT_TRAILING_DATA', `PAYLOAD is ${declared} bytes, HEADER requires ${expected}`);
  return declared;
}

/**
 * Reads the frame and the HEADER, STATEMENT, RECIPIENTS and SIGNATURES sections and the PAYLOAD
 * section header (SPEC.md §6 steps 1–7, each section parsed before the next is read). Leaves the reader at the first payload byte.
 * @throws {@link OappError} every `FORMAT_*` code.
 */
export async function readPackagePrefix(r: ByteReader, options: ParseOptions = {}): Promise<ParsedPackage> {
  const version = await readFrame(r);
  const headerBytes = (await readSection(r, SECTION.HEADER)).slice();
  const header = decodeHeader(headerBytes, version);
  const kind = checkKind(header, options.kind);
  const max = Math.min(options.maxPlaintextBytes ?? DEFAULT_MAX_PLAINTEXT_BYTES, DEFAULT_MAX_PLAINTEXT_BYTES);
  if (header.payload.plaintextSize > max) {
    throw new OappError(
      'FORMAT_PAYLOAD_TOO_LARGE',
      `the payload is ${header.payload.plaintextSize} bytes, the limit is ${max}`,
    );
  }
  const statementBytes = (await readSection(r, SECTION.STATEMENT)).slice();
  const statement = decodeStatement(statementBytes, version);
  checkStatement(version, header, statement);
  const stanzas = decodeStanzas((await readSection(r, SECTION.RECIPIENTS)).slice(), header.recipients);
  const signatures = decodeSignatures((await readSection(r, SECTION.SIGNATURES)).slice());
  return {
    version,
    kind,
    headerBytes,
    headerSha256: sha256(headerBytes),
    header,
    statementBytes,
    statement,
    stanzas,
    signatures,
    payloadLength: await readPayloadLength(r, header),
  };
}
