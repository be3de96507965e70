import { concatBytes } from '@org/envelope-crypto';
import { MAX_STATEMENT_BYTES, SIGNING_TYPES, STATEMENT_FORMAT, type PackageKind } from './constants.js';
import { decodeContent, decodePackageId, encodeContent, type ContentInfo } from './content.js';
import { expectConst, expectObject, type JsonObject } from './internal/fields.js';
import { parseStrictJson } from './strict-json.js';
import { DEFAULT_MAX_PLAINTEXT_BYTES } from './constants.js';

/** The STATEMENT that signers sign (SPEC.md §4.3). Independent of encryption: it survives repackaging. */
export interface Statement {
  readonly format: typeof STATEMENT_FORMAT;
  readonly packageId: string;
  readonly content: ContentInfo;
  /** An embedded license: any JSON object, covered by every signature. */
  readonly license?: Readonly<JsonObject> | undefined;
}

/** Encodes STATEMENT as compact JSON in the fixed key order of SPEC.md §4.3. */
export function encodeStatement(s: Statement): Uint8Array {
  const o: Record<string, unknown> = {
    format: s.format,
    packageId: s.packageId,
    content: encodeContent(s.content),
  };
  if (s.license !== undefined) o['license'] = s.license;
  return new TextEncoder().encode(JSON.stringify(o));
}

/**
 * Parses and validates STATEMENT bytes strictly (SPEC.md §4.3). As in HEADER, every number
 * (license values included) must be a safe integer written without fraction or exponent.
 * @throws {@link OappError} `FORMAT_*` as for HEADER.
 */
export function decodeStatement(bytes: Uint8Array): Statement {
  const v = parseStrictJson(bytes, { what: 'STATEMENT', maxBytes: MAX_STATEMENT_BYTES, integersOnly: true });
  const o = expectObject(v, '', ['format', 'packageId', 'content'], ['license']);
  const license =
    o['license'] === undefined
      ? undefined
      : expectObject(o['license'], '/license', [], Object.keys(o['license'] ?? {}));
  return {
    format: expectConst(o['format'], '/format', STATEMENT_FORMAT),
    packageId: decodePackageId(o['packageId'], '/packageId'),
    content: decodeContent(o['content'], '/content', DEFAULT_MAX_PLAINTEXT_BYTES),
    license,
  };
}

function ascii(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/**
 * The exact bytes a signer signs (SPEC.md §5.1), a pre-authentication encoding:
 * `"OAPPv1" SP len(type) SP type SP len(statement) SP statement SP len(signText) SP signText`,
 * lengths in ASCII decimal. Distinct `type` strings separate app and bootstrap statements.
 */
export function signingMessage(
  kind: PackageKind,
  statementBytes: Uint8Array,
  signText: Uint8Array,
): Uint8Array {
  const type = ascii(SIGNING_TYPES[kind]);
  return concatBytes(
    ascii(`OAPPv1 ${type.length} `),
    type,
    ascii(` ${statementBytes.length} `),
    statementBytes,
    ascii(` ${signText.length} `),
    signText,
  );
}
