// A deliberately flexible package writer for the negative corpus: it builds packages from the
// format's parts and lets one case change exactly one thing (a header field, the payload, a
// signature record) while keeping everything else valid. Test data only.
import { derivePublicKey, encodeHex, sha256 } from '@org/envelope-crypto';
import { HEADER_FORMATS, PAYLOAD_AEAD, SECTION, STATEMENT_FORMAT, type FormatVersion, type PackageKind } from '../src/constants.js';
import { buildStatement } from '../src/create.js';
import { encodeFrame, encodeSection } from '../src/frame.js';
import { encodeHeader, type Header } from '../src/header.js';
import { chunkCount, chunkNonce, derivePayloadKey } from '../src/payload.js';
import { encodeStanzas, sealStanza } from '../src/recipients.js';
import { keyHint } from '../src/fingerprint.js';
import { encodeSignatures, signStatement, type SignatureRecord } from '../src/signatures.js';
import { writerRelease } from '../src/release.js';
import { encodeStatement, type Statement } from '../src/statement.js';
import { aeadEncrypt } from '@org/envelope-crypto';
import type { KeyPairFixture } from '../test/package-surgery.js';
import { concat } from '../test/package-surgery.js';

/** Deterministic bytes: SHA-256(label / counter) blocks. Never for production keys. */
export function seeded(label: string): (n: number) => Uint8Array {
  let counter = 0;
  return (n) => {
    const out = new Uint8Array(n);
    for (let off = 0; off < n; off += 32) {
      out.set(sha256(new TextEncoder().encode(`${label}/${counter++}`)).subarray(0, Math.min(32, n - off)), off);
    }
    return out;
  };
}

export interface RogueOptions {
  seed: string;
  /** Frame version (default 1: the v1 corpus). */
  version?: FormatVersion;
  /** v2: the release sequence (default: seconds since the epoch of createdAt). */
  sequence?: number;
  /** v2: expiry. */
  expiresAt?: Date;
  kind?: PackageKind;
  packageId?: string;
  content: Uint8Array;
  packager: KeyPairFixture;
  recipients: KeyPairFixture[];
  signers: { pair: KeyPairFixture; text: string }[];
  createdAt: Date;
  chunkSize: number;
  /** Edit the signature records before encoding. */
  records?: (records: SignatureRecord[], statementBytes: Uint8Array) => SignatureRecord[];
  /** Edit the statement before it is encoded and signed. */
  statement?: (s: Statement) => Statement;
  /** Edit the header after the payload is sealed (before stanzas bind its digest). */
  header?: (h: Header) => Header;
  /** Seal the payload differently: return the chunks as sealed bytes. */
  chunks?: (payloadKey: Uint8Array, plain: Uint8Array[], seal: (i: number, final: boolean, p: Uint8Array) => Uint8Array) => Uint8Array[];
  /** Edit the encoded HEADER bytes; stanzas then bind the edited bytes (so only the edit is wrong). */
  headerBytes?: (bytes: Uint8Array) => Uint8Array;
  /** Edit the encoded STATEMENT bytes; signatures then cover the edited bytes. */
  statementBytes?: (bytes: Uint8Array) => Uint8Array;
  /** Replace the payload plaintext after the statement was made (content hash then differs). */
  payloadContent?: Uint8Array;
  /**
   * Key-compromise impersonation (SPEC.md §9): each stanza is sealed with the recipient's own secret key towards the
   * packager's public key, which gives the box a real packager would have made (X25519 is symmetric), under the
   * recipient's hint. Only someone holding the recipient's secret key can do this; the HEADER still names the packager.
   */
  forgeWithRecipientKeys?: boolean;
  /** Choose stanza i's nonce (given the fresh one, which is drawn either way so other bytes stay the same). */
  stanzaNonce?: (i: number, fresh: Uint8Array) => Uint8Array;
}

function split(content: Uint8Array, chunkSize: number): Uint8Array[] {
  const n = chunkCount(content.length, chunkSize);
  return Array.from({ length: n }, (_, i) => content.subarray(i * chunkSize, Math.min(content.length, (i + 1) * chunkSize)));
}

/** Builds a package from parts, applying the edits in `o`. */
export function rogue(o: RogueOptions): Uint8Array {
  const kind = o.kind ?? 'app';
  const version = o.version ?? 1;
  const release = writerRelease({ formatVersion: version, createdAt: o.createdAt, sequence: o.sequence, expiresAt: o.expiresAt });
  let statement = buildStatement(kind, o.packageId ?? 'hello-app', o.content, undefined, release);
  if (o.statement) statement = o.statement(statement);
  const statementBytes = o.statementBytes ? o.statementBytes(encodeStatement(statement)) : encodeStatement(statement);
  let records = o.signers.map((s) => signStatement(kind, statementBytes, s.pair.secretKey, s.text, version));
  if (o.records) records = o.records(records, statementBytes);
  const random = seeded(o.seed);
  const fileKey = random(32);
  const payloadKey = derivePayloadKey(fileKey);
  const seal = (i: number, final: boolean, p: Uint8Array) => aeadEncrypt(payloadKey, chunkNonce(i, final), p);
  const plain = split(o.payloadContent ?? o.content, o.chunkSize);
  const sealed = o.chunks ? o.chunks(payloadKey, plain, seal) : plain.map((p, i) => seal(i, i === plain.length - 1, p));
  const payload = concat(sealed);
  let header: Header = {
    format: HEADER_FORMATS[version],
    packageId: statement.packageId,
    ...(version === 1
      ? { createdAt: o.createdAt.toISOString() }
      : { sequence: statement.sequence, createdAt: statement.createdAt ?? '', expiresAt: statement.expiresAt }),
    content: statement.content,
    packager: encodeHex(derivePublicKey(o.packager.secretKey).bytes),
    recipients: o.recipients.length,
    payload: { aead: PAYLOAD_AEAD, chunkSize: o.chunkSize, plaintextSize: o.content.length, ciphertextSha256: encodeHex(sha256(payload)) },
  };
  if (o.header) header = o.header(header);
  const headerBytes = o.headerBytes ? o.headerBytes(encodeHeader(header)) : encodeHeader(header);
  const digest = sha256(headerBytes);
  const nonce = (i: number) => (o.stanzaNonce ? o.stanzaNonce(i, random(24)) : random(24));
  const stanzas = o.recipients.map((r, i) =>
    o.forgeWithRecipientKeys
      ? { ...sealStanza(fileKey, digest, o.packager.publicKey.bytes, r.secretKey.bytes, nonce(i)), hint: keyHint(r.publicKey.bytes) }
      : sealStanza(fileKey, digest, r.publicKey.bytes, o.packager.secretKey.bytes, nonce(i)),
  );
  return concat([
    encodeFrame(version),
    encodeSection(SECTION.HEADER, headerBytes),
    encodeSection(SECTION.STATEMENT, statementBytes),
    encodeSection(SECTION.RECIPIENTS, encodeStanzas(stanzas)),
    encodeSection(SECTION.SIGNATURES, encodeSignatures(records)),
    encodeSection(SECTION.PAYLOAD, payload),
  ]);
}

export { STATEMENT_FORMAT };
