// Normative constants of oapp/v1 and oapp/v2 (SPEC.md §3, §7).

/** Frame magic: 0x89 "OAPP" CR LF 0x1A. */
export const MAGIC = Uint8Array.of(0x89, 0x4f, 0x41, 0x50, 0x50, 0x0d, 0x0a, 0x1a);
/** The frame versions this implementation reads (SPEC.md §13): v1 is frozen, v2 adds the release fields. */
export const FORMAT_VERSIONS = [1, 2] as const;
/** A frame version this implementation reads and writes. */
export type FormatVersion = (typeof FORMAT_VERSIONS)[number];
/** The frame version writers write unless told otherwise. */
export const DEFAULT_FORMAT_VERSION: FormatVersion = 2;
/** The frame version writers write by default (alias of {@link DEFAULT_FORMAT_VERSION}). */
export const FORMAT_VERSION: FormatVersion = DEFAULT_FORMAT_VERSION;
/** Frame size: magic (8) ‖ version u16 ‖ flags u16. */
export const FRAME_BYTES = 12;
/** Section header size: tag u8 ‖ length u32. */
export const SECTION_HEADER_BYTES = 5;

/** Section tags, in the one order they must appear. */
export const SECTION = { HEADER: 1, STATEMENT: 2, RECIPIENTS: 3, SIGNATURES: 4, PAYLOAD: 5 } as const;
/** Section names by tag, for messages. */
export const SECTION_NAMES = ['', 'HEADER', 'STATEMENT', 'RECIPIENTS', 'SIGNATURES', 'PAYLOAD'] as const;

/** `format` value of HEADER, per frame version. */
export const HEADER_FORMATS = { 1: 'oapp/v1', 2: 'oapp/v2' } as const;
/** `format` value of STATEMENT, per frame version. */
export const STATEMENT_FORMATS = { 1: 'oapp-statement/v1', 2: 'oapp-statement/v2' } as const;
/** `format` value of a v1 HEADER. */
export const HEADER_FORMAT = HEADER_FORMATS[1];
/** `format` value of a v1 STATEMENT. */
export const STATEMENT_FORMAT = STATEMENT_FORMATS[1];
/** A HEADER `format` value. */
export type HeaderFormat = (typeof HEADER_FORMATS)[FormatVersion];
/** A STATEMENT `format` value. */
export type StatementFormat = (typeof STATEMENT_FORMATS)[FormatVersion];
/** The clock skew a freshness check allows past `expiresAt` unless configured otherwise (SPEC.md §6 step 13a). */
export const DEFAULT_CLOCK_SKEW_SECONDS = 300;
/** The largest configurable clock skew (one day). */
export const MAX_CLOCK_SKEW_SECONDS = 86_400;
/** The one payload AEAD of v1 and v2. */
export const PAYLOAD_AEAD = 'chacha20-poly1305-stream/v1';

/** Media type of a workflow app package's content. */
export const MEDIA_TYPE_WORKFLOW = 'application/vnd.oapp.workflow+json';
/** Media type of an encrypted bootstrap's content. */
export const MEDIA_TYPE_BOOTSTRAP = 'application/vnd.oapp.bootstrap+json';
/** Package kinds and their media types. */
export const KIND_MEDIA_TYPES = { app: MEDIA_TYPE_WORKFLOW, bootstrap: MEDIA_TYPE_BOOTSTRAP } as const;
/** A package kind: a workflow `app` or an encrypted `bootstrap`. */
export type PackageKind = keyof typeof KIND_MEDIA_TYPES;
/** Signature domain-separation types (PAE `type`), one per kind. */
export const SIGNING_TYPES = {
  app: 'application/vnd.oapp.statement.app+json',
  bootstrap: 'application/vnd.oapp.statement.bootstrap+json',
} as const;

/** Limits (SPEC.md §7). Checked before any allocation of a declared length. */
export const MAX_HEADER_BYTES = 16_384;
/** STATEMENT byte cap. */
export const MAX_STATEMENT_BYTES = 16_384;
/** Signature record cap. */
export const MAX_SIGNATURES = 64;
/** signText byte cap. */
export const MAX_SIGN_TEXT_BYTES = 1_024;
/** Recipient stanza cap. */
export const MAX_RECIPIENTS = 1_024;
/** Envelope chain cap. */
export const MAX_ENVELOPE_DEPTH = 16;
/** packageId byte cap. */
export const MAX_PACKAGE_ID_BYTES = 256;
/** Default (and largest) plaintext size a reader accepts, unless configured lower. */
export const DEFAULT_MAX_PLAINTEXT_BYTES = 4_026_531_840; // 3.75 GiB: ciphertext must fit a u32 length
/** Default payload chunk size. */
export const DEFAULT_CHUNK_BYTES = 65_536;
/** Smallest and largest chunk sizes (powers of two). */
export const MIN_CHUNK_BYTES = 1_024;
/** Largest chunk size. */
export const MAX_CHUNK_BYTES = 1_048_576;
/** Poly1305 tag per chunk. */
export const CHUNK_TAG_BYTES = 16;

/** Recipient stanza: hint (8) ‖ nonce (24) ‖ box (16 + 64). */
export const STANZA_HINT_BYTES = 8;
/** Stanza size. */
export const STANZA_BYTES = 8 + 24 + 16 + 64;
/** Fixed part of a signature record: public key (32) ‖ signText length u16 ‖ … ‖ signature (64). */
export const SIGNATURE_RECORD_FIXED_BYTES = 32 + 2 + 64;

/** Upper bounds of the section lengths (SPEC.md §7), checked on the declared length. */
export const MAX_SECTION_BYTES: Readonly<Record<number, number>> = {
  [SECTION.HEADER]: MAX_HEADER_BYTES,
  [SECTION.STATEMENT]: MAX_STATEMENT_BYTES,
  [SECTION.RECIPIENTS]: MAX_RECIPIENTS * STANZA_BYTES,
  [SECTION.SIGNATURES]: MAX_SIGNATURES * (SIGNATURE_RECORD_FIXED_BYTES + MAX_SIGN_TEXT_BYTES),
  [SECTION.PAYLOAD]: 0xffff_ffff,
};
