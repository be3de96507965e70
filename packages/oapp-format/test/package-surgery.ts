// Byte-level editing of packages for tests and the negative-corpus generator: find sections,
// replace a section value (fixing its length), cut sections, flip bytes. Deliberately lenient:
// it must be able to describe broken packages.
import type { Key } from '@org/envelope-crypto';

export interface KeyPairFixture {
  id: string;
  secretKey: Key;
  publicKey: Key;
}

export interface SectionSpan {
  tag: number;
  /** Offset of the section header (tag byte). */
  offset: number;
  valueOffset: number;
  length: number;
  /** The value bytes (clipped to the input). */
  value: Uint8Array;
  /** Section header and value. */
  bytes: Uint8Array;
  lengthBytes: Uint8Array;
}

export interface Sections {
  header: SectionSpan;
  statement: SectionSpan;
  recipients: SectionSpan;
  signatures: SectionSpan;
  payload: SectionSpan;
  all: SectionSpan[];
}

const NAMES = ['', 'header', 'statement', 'recipients', 'signatures', 'payload'] as const;

export function sectionsOf(pkg: Uint8Array, _opts: { lenient?: boolean } = {}): Sections {
  const view = new DataView(pkg.buffer, pkg.byteOffset, pkg.byteLength);
  const all: SectionSpan[] = [];
  let off = 12;
  while (off + 5 <= pkg.length) {
    const tag = pkg[off]!;
    const length = view.getUint32(off + 1);
    const end = Math.min(pkg.length, off + 5 + length);
    all.push({
      tag,
      offset: off,
      valueOffset: off + 5,
      length,
      value: pkg.slice(off + 5, end),
      bytes: pkg.slice(off, end),
      lengthBytes: pkg.slice(off + 1, off + 5),
    });
    off = off + 5 + length;
  }
  const by = (t: number) => all.find((s) => s.tag === t) ?? all[0]!;
  const out = { all } as unknown as Sections;
  for (let t = 1; t <= 5; t++) (out as unknown as Record<string, SectionSpan>)[NAMES[t]!] = by(t);
  return out;
}

function section(tag: number, value: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + value.length);
  out[0] = tag;
  new DataView(out.buffer).setUint32(1, value.length);
  out.set(value, 5);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Replaces one section's value (the callback may return any bytes, including several sections). */
export function mutateSection(
  pkg: Uint8Array,
  tag: number,
  fn: (value: Uint8Array, span: SectionSpan) => Uint8Array,
): Uint8Array {
  const s = sectionsOf(pkg);
  const parts: Uint8Array[] = [pkg.subarray(0, 12)];
  for (const span of s.all) parts.push(span.tag === tag ? section(tag, fn(span.value, span)) : span.bytes);
  return concat(parts);
}

/** Replaces a section value with JSON text edited as a string. */
export function mutateJsonSection(pkg: Uint8Array, tag: number, fn: (json: string) => string): Uint8Array {
  return mutateSection(pkg, tag, (v) => new TextEncoder().encode(fn(new TextDecoder().decode(v))));
}

/** Removes a section entirely. */
export function cutSection(pkg: Uint8Array, tag: number): Uint8Array {
  const s = sectionsOf(pkg);
  return concat([pkg.subarray(0, 12), ...s.all.filter((x) => x.tag !== tag).map((x) => x.bytes)]);
}

/** A copy with byte `i` XORed with `mask`. */
export function flipByte(pkg: Uint8Array, i: number, mask = 0x01): Uint8Array {
  const out = pkg.slice();
  out[i]! ^= mask;
  return out;
}

/** Sets the declared PAYLOAD length. */
export function setPayloadLength(pkg: Uint8Array, length: number): Uint8Array {
  const out = pkg.slice();
  const p = sectionsOf(out).payload;
  new DataView(out.buffer, out.byteOffset).setUint32(p.offset + 1, length);
  return out;
}

export { concat, section };
