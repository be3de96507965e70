import {
  FORMAT_VERSIONS,
  FRAME_BYTES,
  type FormatVersion,
  MAGIC,
  MAX_SECTION_BYTES,
  SECTION,
  SECTION_HEADER_BYTES,
  SECTION_NAMES,
} from './constants.js';
import { OappError } from './errors.js';
import type { ByteReader } from './internal/byte-reader.js';

/** Encodes the 12-byte frame: magic ‖ version u16 BE ‖ flags u16 BE (SPEC.md §3.1). */
export function encodeFrame(version: FormatVersion): Uint8Array {
  const out = new Uint8Array(FRAME_BYTES);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint16(8, version);
  return out;
}

/** Encodes one section: tag u8 ‖ length u32 BE ‖ value (SPEC.md §3.2). */
export function encodeSection(tag: number, value: Uint8Array): Uint8Array {
  const out = new Uint8Array(SECTION_HEADER_BYTES + value.length);
  out[0] = tag;
  new DataView(out.buffer).setUint32(1, value.length);
  out.set(value, SECTION_HEADER_BYTES);
  return out;
}

/** Encodes a section header alone (for the streamed PAYLOAD). */
export function encodeSectionHeader(tag: number, length: number): Uint8Array {
  const out = new Uint8Array(SECTION_HEADER_BYTES);
  out[0] = tag;
  new DataView(out.buffer).setUint32(1, length);
  return out;
}

/**
 * Reads and checks the frame. The magic is compared before anything else is read, so a
 * wrong file type is `FORMAT_BAD_MAGIC` even when it is shorter than the frame.
 * @returns the frame version (1 or 2).
 * @throws {@link OappError} `FORMAT_BAD_MAGIC`, `FORMAT_TRUNCATED`, `FORMAT_VERSION_UNSUPPORTED`, `FORMAT_BAD_FLAGS`.
 */
export async function readFrame(r: ByteReader): Promise<FormatVersion> {
  const head = await r.readUpTo(MAGIC.length);
  for (let i = 0; i < head.length; i++) {
    if (head[i] !== MAGIC[i])
      throw new OappError('FORMAT_BAD_MAGIC', 'not an oapp package (wrong magic bytes)');
  }
  if (head.length < MAGIC.length)
    throw new OappError('FORMAT_TRUNCATED', 'the package ends inside the frame');
  const rest = await r.readExact(4, 'the frame');
  const view = new DataView(rest.buffer, rest.byteOffset, 4);
  const version = view.getUint16(0);
  if (!(FORMAT_VERSIONS as readonly number[]).includes(version)) {
    throw new OappError(
      'FORMAT_VERSION_UNSUPPORTED',
      `frame version ${version} is not supported (this reader knows versions ${FORMAT_VERSIONS.join(' and ')})`,
      { details: { version } },
    );
  }
  if (view.getUint16(2) !== 0)
    throw new OappError('FORMAT_BAD_FLAGS', `frame flags must be zero in version ${version}`);
  return version as FormatVersion;
}

function sectionName(tag: number): string {
  return SECTION_NAMES[tag] ?? `tag ${tag}`;
}

/**
 * Reads the header of the section that must come next and checks its tag and declared length
 * (before anything of that length is read or allocated).
 * @returns the declared length.
 * @throws {@link OappError} `FORMAT_TRUNCATED`, `FORMAT_BAD_SECTIONS`, `FORMAT_SECTION_TOO_LARGE`.
 */
export async function readSectionHeader(r: ByteReader, expected: number): Promise<number> {
  const h = await r.readExact(SECTION_HEADER_BYTES, `the ${sectionName(expected)} section header`);
  const tag = h[0] ?? 0;
  const length = new DataView(h.buffer, h.byteOffset, SECTION_HEADER_BYTES).getUint32(1);
  if (tag !== expected) {
    const why =
      tag < 1 || tag > SECTION.PAYLOAD
        ? `unknown section tag ${tag}`
        : tag < expected
          ? `section ${sectionName(tag)} appears again or out of order`
          : `section ${sectionName(expected)} is missing`;
    throw new OappError('FORMAT_BAD_SECTIONS', `${why} (expected ${sectionName(expected)})`, {
      details: { expected: sectionName(expected), found: tag },
    });
  }
  const max = MAX_SECTION_BYTES[tag] ?? 0;
  if (length > max) {
    throw new OappError(
      'FORMAT_SECTION_TOO_LARGE',
      `section ${sectionName(tag)} declares ${length} bytes, the limit is ${max}`,
    );
  }
  return length;
}

/** Reads a whole non-payload section value. */
export async function readSection(r: ByteReader, expected: number): Promise<Uint8Array> {
  const length = await readSectionHeader(r, expected);
  return r.readExact(length, `section ${sectionName(expected)}`);
}
