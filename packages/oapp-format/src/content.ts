import { KIND_MEDIA_TYPES, MAX_PACKAGE_ID_BYTES, type PackageKind } from './constants.js';
import { OappError } from './errors.js';
import { expectHex, expectObject, expectSize, expectString, type JsonObject } from './internal/fields.js';

/** What the package carries: media type, exact size and SHA-256 of the plaintext. */
export interface ContentInfo {
  readonly mediaType: string;
  readonly size: number;
  readonly sha256: string;
}

/** The kind of a media type, or `undefined` for an unknown media type. */
export function kindOfMediaType(mediaType: string): PackageKind | undefined {
  if (mediaType === KIND_MEDIA_TYPES.app) return 'app';
  if (mediaType === KIND_MEDIA_TYPES.bootstrap) return 'bootstrap';
  return undefined;
}

/** Validates a `content` object (SPEC.md §4.2). */
export function decodeContent(v: unknown, field: string, maxSize: number): ContentInfo {
  const o = expectObject(v, field, ['mediaType', 'size', 'sha256']);
  const mediaType = expectString(o['mediaType'], `${field}/mediaType`, 128);
  if (kindOfMediaType(mediaType) === undefined) {
    throw new OappError('FORMAT_BAD_FIELD', `${field}/mediaType: unknown media type`, {
      details: { field: `${field}/mediaType` },
    });
  }
  return {
    mediaType,
    size: expectSize(o['size'], `${field}/size`, maxSize),
    sha256: expectHex(o['sha256'], `${field}/sha256`, 32),
  };
}

/** Validates a packageId: 1 to 256 UTF-8 bytes, no control characters; compared byte for byte. */
export function decodePackageId(v: unknown, field: string): string {
  return expectString(v, field, MAX_PACKAGE_ID_BYTES);
}

/** The content object in its fixed key order. */
export function encodeContent(c: ContentInfo): JsonObject {
  return { mediaType: c.mediaType, size: c.size, sha256: c.sha256 };
}

/** True when two content descriptions are identical. */
export function sameContent(a: ContentInfo, b: ContentInfo): boolean {
  return a.mediaType === b.mediaType && a.size === b.size && a.sha256 === b.sha256;
}
