import { decodeHex, encodeHex } from '@org/envelope-crypto';
import { FORMAT_VERSION, type PackageKind } from './constants.js';
import type { ContentInfo } from './content.js';
import { fingerprint } from './fingerprint.js';
import type { EnvelopeLink } from './header.js';
import { ByteReader } from './internal/byte-reader.js';
import { readPackagePrefix } from './parse.js';
import { verifyRecord } from './signatures.js';

/** What `inspectPackage` shows: everything readable without a secret key (SPEC.md §6.3). */
export interface PackageInspection {
  readonly format: string;
  readonly version: number;
  readonly kind: PackageKind;
  readonly packageId: string;
  readonly createdAt: string;
  readonly content: ContentInfo;
  readonly headerSha256: string;
  readonly packager: { readonly publicKeyHex: string; readonly fingerprint: string };
  readonly recipients: readonly { readonly fingerprint: string }[];
  readonly signatures: readonly {
    readonly publicKeyHex: string;
    readonly fingerprint: string;
    readonly signText: string;
    /** Strict Ed25519 verification of this record over this package's STATEMENT. */
    readonly valid: boolean;
  }[];
  readonly license: Readonly<Record<string, unknown>> | null;
  readonly envelope: readonly EnvelopeLink[];
  readonly payload: {
    readonly aead: string;
    readonly chunkSize: number;
    readonly ciphertextBytes: number;
    readonly ciphertextSha256: string;
  };
}

/**
 * Inspects a package without any secret key: parses every section (strictly, with all limits)
 * and verifies every signature. It does not read the payload beyond its declared length and does
 * not check the packager against any policy: that is the deployment's job.
 * @throws {@link OappError} `FORMAT_*`.
 */
export async function inspectPackage(
  source: Uint8Array | AsyncIterable<Uint8Array>,
): Promise<PackageInspection> {
  const r = new ByteReader(source instanceof Uint8Array ? [source] : source);
  try {
    const p = await readPackagePrefix(r);
    const { header, statement } = p;
    return {
      format: header.format,
      version: FORMAT_VERSION,
      kind: p.kind,
      packageId: header.packageId,
      createdAt: header.createdAt,
      content: header.content,
      headerSha256: encodeHex(p.headerSha256),
      packager: { publicKeyHex: header.packager, fingerprint: fingerprint(decodeHex(header.packager, 32)) },
      recipients: p.stanzas.map((s) => ({ fingerprint: encodeHex(s.hint) })),
      signatures: p.signatures.map((rec) => ({
        publicKeyHex: encodeHex(rec.publicKey),
        fingerprint: fingerprint(rec.publicKey),
        signText: rec.signText,
        valid: verifyRecord(p.kind, p.statementBytes, rec),
      })),
      license: statement.license ?? null,
      envelope: header.envelope?.chain ?? [],
      payload: {
        aead: header.payload.aead,
        chunkSize: header.payload.chunkSize,
        ciphertextBytes: p.payloadLength,
        ciphertextSha256: header.payload.ciphertextSha256,
      },
    };
  } finally {
    await r.close();
  }
}
