import {
  DEFAULT_MAX_PLAINTEXT_BYTES,
  HEADER_FORMATS,
  MAX_CHUNK_BYTES,
  MAX_ENVELOPE_DEPTH,
  MAX_HEADER_BYTES,
  MAX_RECIPIENTS,
  MIN_CHUNK_BYTES,
  PAYLOAD_AEAD,
  type FormatVersion,
  type HeaderFormat,
} from './constants.js';
import { decodeContent, decodePackageId, encodeContent, type ContentInfo } from './content.js';
import { OappError } from './errors.js';
import {
  expectArray,
  expectConst,
  expectFormat,
  expectHex,
  expectObject,
  expectSize,
  expectTimestamp,
} from './internal/fields.js';
import { decodeRelease, encodeRelease } from './release.js';
import { parseStrictJson } from './strict-json.js';

/** A previous packaging of the same statement (SPEC.md §4.2, `envelope`). */
export interface EnvelopeLink {
  /** The previous packager identity (X25519 public key, lowercase hex). */
  readonly packager: string;
  /** SHA-256 of the previous package's HEADER bytes. */
  readonly headerSha256: string;
}

/** The authenticated HEADER (SPEC.md §4.2): v1, or v2 with the release fields. */
export interface Header {
  readonly format: HeaderFormat;
  readonly packageId: string;
  /** v2 only: the release sequence (equal to the STATEMENT's). */
  readonly sequence?: number | undefined;
  readonly createdAt: string;
  /** v2 only, optional: when the release stops being accepted. */
  readonly expiresAt?: string | undefined;
  readonly content: ContentInfo;
  /** The packager identity (X25519 public key, lowercase hex). */
  readonly packager: string;
  readonly recipients: number;
  readonly payload: {
    readonly aead: typeof PAYLOAD_AEAD;
    readonly chunkSize: number;
    readonly plaintextSize: number;
    readonly ciphertextSha256: string;
  };
  readonly envelope?: { readonly chain: readonly EnvelopeLink[] } | undefined;
}

/** The frame version a HEADER `format` belongs to. */
export function headerVersion(h: Pick<Header, 'format'>): FormatVersion {
  return h.format === HEADER_FORMATS[1] ? 1 : 2;
}

/** Encodes HEADER as compact JSON in the fixed key order of SPEC.md §4.2 (v1 or v2, after `format`). */
export function encodeHeader(h: Header): Uint8Array {
  const release =
    headerVersion(h) === 1
      ? { createdAt: h.createdAt }
      : encodeRelease({ sequence: h.sequence ?? 0, createdAt: h.createdAt, expiresAt: h.expiresAt });
  const o: Record<string, unknown> = {
    format: h.format,
    packageId: h.packageId,
    ...release,
    content: encodeContent(h.content),
    packager: h.packager,
    recipients: h.recipients,
    payload: {
      aead: h.payload.aead,
      chunkSize: h.payload.chunkSize,
      plaintextSize: h.payload.plaintextSize,
      ciphertextSha256: h.payload.ciphertextSha256,
    },
  };
  if (h.envelope !== undefined)
    o['envelope'] = {
      chain: h.envelope.chain.map((l) => ({ packager: l.packager, headerSha256: l.headerSha256 })),
    };
  return new TextEncoder().encode(JSON.stringify(o));
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

function decodePayloadInfo(v: unknown): Header['payload'] {
  const p = expectObject(v, '/payload', ['aead', 'chunkSize', 'plaintextSize', 'ciphertextSha256']);
  // SPEC.md §4.2: one algorithm per version; anything else (older, unknown, "none") is refused.
  const aead = expectConst(p['aead'], '/payload/aead', PAYLOAD_AEAD, 'FORMAT_UNSUPPORTED_ALGORITHM');
  const chunkSize = expectSize(p['chunkSize'], '/payload/chunkSize', MAX_CHUNK_BYTES);
  if (chunkSize < MIN_CHUNK_BYTES || !isPowerOfTwo(chunkSize)) {
    throw new OappError(
      'FORMAT_BAD_FIELD',
      '/payload/chunkSize: expected a power of two from 1024 to 1048576',
      { details: { field: '/payload/chunkSize' } },
    );
  }
  const plaintextSize = expectSize(p['plaintextSize'], '/payload/plaintextSize', DEFAULT_MAX_PLAINTEXT_BYTES);
  return {
    aead,
    chunkSize,
    plaintextSize,
    ciphertextSha256: expectHex(p['ciphertextSha256'], '/payload/ciphertextSha256', 32),
  };
}

function decodeEnvelope(v: unknown): Header['envelope'] {
  if (v === undefined) return undefined;
  const e = expectObject(v, '/envelope', ['chain']);
  const chain = expectArray(e['chain'], '/envelope/chain', MAX_ENVELOPE_DEPTH).map((item, i) => {
    const l = expectObject(item, `/envelope/chain/${i}`, ['packager', 'headerSha256']);
    return {
      packager: expectHex(l['packager'], `/envelope/chain/${i}/packager`, 32),
      headerSha256: expectHex(l['headerSha256'], `/envelope/chain/${i}/headerSha256`, 32),
    };
  });
  if (chain.length === 0)
    throw new OappError('FORMAT_BAD_FIELD', '/envelope/chain: expected at least one link', {
      details: { field: '/envelope/chain' },
    });
  return { chain };
}

const HEADER_MEMBERS = ['format', 'packageId', 'createdAt', 'content', 'packager', 'recipients', 'payload'];

/**
 * Parses and validates HEADER bytes strictly (SPEC.md §4.2), for the frame version the frame declared.
 * @throws {@link OappError} `FORMAT_SECTION_TOO_LARGE`, `FORMAT_BAD_UTF8`, `FORMAT_JSON_*`,
 *   `FORMAT_UNKNOWN_FIELD`, `FORMAT_BAD_FIELD`, `FORMAT_UNSUPPORTED_ALGORITHM`.
 */
export function decodeHeader(bytes: Uint8Array, version: FormatVersion): Header {
  const v = parseStrictJson(bytes, { what: 'HEADER', maxBytes: MAX_HEADER_BYTES, integersOnly: true });
  const format = expectFormat(v, HEADER_FORMATS[version]);
  const o =
    version === 1
      ? expectObject(v, '', HEADER_MEMBERS, ['envelope'])
      : expectObject(v, '', [...HEADER_MEMBERS, 'sequence'], ['expiresAt', 'envelope']);
  const release = version === 1 ? undefined : decodeRelease(o);
  const content = decodeContent(o['content'], '/content', DEFAULT_MAX_PLAINTEXT_BYTES);
  const payload = decodePayloadInfo(o['payload']);
  if (payload.plaintextSize !== content.size) {
    throw new OappError('FORMAT_BAD_FIELD', '/payload/plaintextSize: must equal /content/size', {
      details: { field: '/payload/plaintextSize' },
    });
  }
  const recipients = expectSize(o['recipients'], '/recipients');
  if (recipients > MAX_RECIPIENTS) {
    throw new OappError(
      'FORMAT_TOO_MANY_RECIPIENTS',
      `HEADER declares ${recipients} recipients, the limit is ${MAX_RECIPIENTS}`,
    );
  }
  if (recipients === 0)
    throw new OappError('FORMAT_BAD_FIELD', '/recipients: expected at least one recipient', {
      details: { field: '/recipients' },
    });
  const packageId = decodePackageId(o['packageId'], '/packageId');
  return {
    format,
    packageId,
    ...(release === undefined
      ? { createdAt: expectTimestamp(o['createdAt'], '/createdAt') }
      : { sequence: release.sequence, createdAt: release.createdAt, expiresAt: release.expiresAt }),
    content,
    packager: expectHex(o['packager'], '/packager', 32),
    recipients,
    payload,
    envelope: decodeEnvelope(o['envelope']),
  };
}
