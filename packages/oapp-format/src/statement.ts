import { concatBytes } from '@org/envelope-crypto';
import {
  DEFAULT_MAX_PLAINTEXT_BYTES,
  MAX_STATEMENT_BYTES,
  SIGNING_TYPES,
  STATEMENT_FORMATS,
  type FormatVersion,
  type PackageKind,
  type StatementFormat,
} from './constants.js';
import { decodeContent, decodePackageId, encodeContent, type ContentInfo } from './content.js';
import { expectFormat, expectObject, type JsonObject } from './internal/fields.js';
import { decodeRelease, encodeRelease } from './release.js';
import { parseStrictJson } from './strict-json.js';

/**
 * The STATEMENT that signers sign (SPEC.md §4.3). Independent of encryption: it survives repackaging. A v2
 * STATEMENT also carries the release fields (`sequence`, `createdAt`, `expiresAt`), so signers vouch for them.
 */
export interface Statement {
  readonly format: StatementFormat;
  readonly packageId: string;
  /** v2 only. */
  readonly sequence?: number | undefined;
  /** v2 only. */
  readonly createdAt?: string | undefined;
  /** v2 only, optional. */
  readonly expiresAt?: string | undefined;
  readonly content: ContentInfo;
  /** An embedded license: any JSON object, covered by every signature. */
  readonly license?: Readonly<JsonObject> | undefined;
}

/** The frame version a STATEMENT `format` belongs to. */
export function statementVersion(s: Pick<Statement, 'format'>): FormatVersion {
  return s.format === STATEMENT_FORMATS[1] ? 1 : 2;
}

/** Encodes STATEMENT as compact JSON in the fixed key order of SPEC.md §4.3. */
export function encodeStatement(s: Statement): Uint8Array {
  const release =
    statementVersion(s) === 1
      ? {}
      : encodeRelease({ sequence: s.sequence ?? 0, createdAt: s.createdAt ?? '', expiresAt: s.expiresAt });
  const o: Record<string, unknown> = {
    format: s.format,
    packageId: s.packageId,
    ...release,
    content: encodeContent(s.content),
  };
  if (s.license !== undefined) o['license'] = s.license;
  return new TextEncoder().encode(JSON.stringify(o));
}

/**
 * Parses and validates STATEMENT bytes strictly (SPEC.md §4.3) for a frame version. As in HEADER, every number
 * (license values included) must be a safe integer written without fraction or exponent.
 * @throws {@link OappError} `FORMAT_*` as for HEADER.
 */
export function decodeStatement(bytes: Uint8Array, version: FormatVersion): Statement {
  const v = parseStrictJson(bytes, { what: 'STATEMENT', maxBytes: MAX_STATEMENT_BYTES, integersOnly: true });
  const format = expectFormat(v, STATEMENT_FORMATS[version]);
  const o =
    version === 1
      ? expectObject(v, '', ['format', 'packageId', 'content'], ['license'])
      : expectObject(
          v,
          '',
          ['format', 'packageId', 'sequence', 'createdAt', 'content'],
          ['expiresAt', 'license'],
        );
  const release = version === 1 ? {} : decodeRelease(o);
  const license =
    o['license'] === undefined
      ? undefined
      : expectObject(o['license'], '/license', [], Object.keys(o['license'] ?? {}));
  return {
    format,
    packageId: decodePackageId(o['packageId'], '/packageId'),
    ...release,
    content: decodeContent(o['content'], '/content', DEFAULT_MAX_PLAINTEXT_BYTES),
    license,
  };
}

function ascii(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/**
 * The exact bytes a signer signs (SPEC.md §5.1), a pre-authentication encoding:
 * `"OAPPv<version>" SP len(type) SP type SP len(statement) SP statement SP len(signText) SP signText`,
 * lengths in ASCII decimal. Distinct `type` strings separate app and bootstrap statements; the version prefix
 * ("OAPPv1", "OAPPv2") separates the format versions.
 */
export function signingMessage(
  kind: PackageKind,
  statementBytes: Uint8Array,
  signText: Uint8Array,
  version: FormatVersion,
): Uint8Array {
  const type = ascii(SIGNING_TYPES[kind]);
  return concatBytes(
    ascii(`OAPPv${version} ${type.length} `),
    type,
    ascii(` ${statementBytes.length} `),
    statementBytes,
    ascii(` ${signText.length} `),
    signText,
  );
}
