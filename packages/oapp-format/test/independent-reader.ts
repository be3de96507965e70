/**
 * An independent oapp/v1 and oapp/v2 reader written from SPEC.md alone, with libsodium and plain JavaScript.
 * It imports nothing from ../src or from @org/envelope-crypto: its only purpose is to show that the
 * specification is precise enough to be implemented twice. Section numbers (§) refer to SPEC.md.
 */
import sodium from 'libsodium-wrappers-sumo';

// ---------------------------------------------------------------------------------------------
// Errors (§1 "Reject (CODE)", §8)
// ---------------------------------------------------------------------------------------------

/** A rejection with the code the SPEC assigns to it. */
export class SpecReject extends Error {
  constructor(
    readonly code: string,
    detail?: string,
  ) {
    super(detail === undefined ? code : `${code}: ${detail}`);
    this.name = 'SpecReject';
  }
}

function reject(code: string, detail?: string): never {
  throw new SpecReject(code, detail);
}

export async function sodiumReady(): Promise<void> {
  await sodium.ready;
}

// ---------------------------------------------------------------------------------------------
// Primitives (§1)
// ---------------------------------------------------------------------------------------------

const utf8 = new TextEncoder();
/** §1: UTF-8 is decoded fatally. ignoreBOM keeps a leading U+FEFF so that §4.1 rule 2 can see it. */
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Uint8Array, code: string): string {
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    return reject(code, 'invalid UTF-8');
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function sha256(bytes: Uint8Array): Uint8Array {
  return sodium.crypto_hash_sha256(bytes);
}

/** §6: "All digest and MAC comparisons are constant-time and compare lengths first." */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && sodium.memcmp(a, b);
}

export function toHex(bytes: Uint8Array): string {
  return sodium.to_hex(bytes);
}

/** §1: hex inside the format is lowercase, exactly twice the byte length. */
function isFormatHex(s: string, byteLength: number): boolean {
  return s.length === 2 * byteLength && /^[0-9a-f]*$/.test(s);
}

/** §11: hex from people MAY use either letter case; any other length is an error. */
export function decodeHumanHex(s: string, byteLength: number): Uint8Array {
  if (s.length !== 2 * byteLength || !/^[0-9a-fA-F]*$/.test(s)) {
    return reject('KEY_TEXT_INVALID', `expected ${2 * byteLength} hex characters`); // code: see report (§11 names none)
  }
  return sodium.from_hex(s.toLowerCase());
}

/** §1: canonical, padded RFC 4648 §4 Base64; re-encoding MUST give the input back. */
export function decodeCanonicalBase64(s: string, code: string): Uint8Array {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) reject(code);
  let bytes: Uint8Array;
  try {
    bytes = sodium.from_base64(s, sodium.base64_variants.ORIGINAL);
  } catch {
    return reject(code);
  }
  if (sodium.to_base64(bytes, sodium.base64_variants.ORIGINAL) !== s) reject(code);
  return bytes;
}

/** RFC 5869 HKDF-SHA-256 built from HMAC-SHA-256 (§1, §4.6). */
export function hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  // RFC 5869 §2.2: an absent/empty salt is HashLen zero bytes (the same HMAC key once zero-padded).
  const key = salt.length === 0 ? new Uint8Array(32) : salt;
  const prk = hmacSha256(key, ikm);
  const blocks: Uint8Array[] = [];
  let previous: Uint8Array = new Uint8Array(0);
  for (let i = 1; blocks.length * 32 < length; i++) {
    previous = hmacSha256(prk, concat(previous, info, Uint8Array.of(i)));
    blocks.push(previous);
  }
  return concat(...blocks).slice(0, length);
}

function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  const state = sodium.crypto_auth_hmacsha256_init(key);
  sodium.crypto_auth_hmacsha256_update(state, message);
  return sodium.crypto_auth_hmacsha256_final(state);
}

// ---------------------------------------------------------------------------------------------
// Weak keys (§2)
// ---------------------------------------------------------------------------------------------

const P = 2n ** 255n - 19n;

function littleEndianTopBitCleared(key: Uint8Array): bigint {
  let v = 0n;
  for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(i === 31 ? (key[i] ?? 0) & 0x7f : (key[i] ?? 0));
  return v;
}

/** §2: the X25519 weak values, verbatim. */
const X25519_WEAK = new Set<bigint>([
  0n,
  1n,
  P - 1n,
  P,
  P + 1n,
  325606250916557431795983626356110631294008115727848805560023387167927233504n,
  39382357235489614581723060781553021112529911719440698176882885853963445705823n,
]);

export function isWeakX25519(pk: Uint8Array): boolean {
  return pk.length !== 32 || X25519_WEAK.has(littleEndianTopBitCleared(pk));
}

function littleEndian(key: Uint8Array): bigint {
  let v = 0n;
  for (let i = key.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(key[i] ?? 0);
  return v;
}

/** §2: an X25519 public key is canonical when its 32 bytes, all 256 bits, read little-endian, are below p. */
export function isCanonicalX25519(pk: Uint8Array): boolean {
  return pk.length === 32 && littleEndian(pk) < P;
}

/** §2: an Ed25519 public key is canonical when y (bit 255 cleared) is below p. */
export function isCanonicalEd25519(pk: Uint8Array): boolean {
  return pk.length === 32 && littleEndianTopBitCleared(pk) < P;
}

/** §2: a canonical y is on the curve when x² = (y² − 1) / (d·y² + 1) has a square root mod p. */
export function isEd25519CurveY(pk: Uint8Array): boolean {
  const y = littleEndianTopBitCleared(pk);
  const d = (((-121665n * modPow(121666n, P - 2n)) % P) + P) % P;
  const x2 = (((((y * y - 1n) % P) + P) % P) * modPow((d * y * y + 1n) % P, P - 2n)) % P;
  return sqrtModP(x2) !== undefined;
}

/**
 * §2: the one check of a public key wherever it appears (key text, a policy, HEADER.packager), with its codes.
 * X25519: weak first (CRYPTO_WEAK_KEY), then canonical (CRYPTO_INVALID_PUBLIC_KEY). Ed25519: canonical first,
 * then weak, then on the curve.
 */
export function checkPublicKey(pk: Uint8Array, purpose: 'authenticated' | 'sign', where: string): void {
  if (purpose === 'authenticated') {
    if (isWeakX25519(pk)) reject('CRYPTO_WEAK_KEY', where);
    if (!isCanonicalX25519(pk)) reject('CRYPTO_INVALID_PUBLIC_KEY', where);
    return;
  }
  if (!isCanonicalEd25519(pk)) reject('CRYPTO_INVALID_PUBLIC_KEY', where);
  if (isWeakEd25519(pk)) reject('CRYPTO_WEAK_KEY', where);
  if (!isEd25519CurveY(pk)) reject('CRYPTO_INVALID_PUBLIC_KEY', where);
}

/** §11: a public key in text form: hex of 64 characters, either case, then the §2 check. */
export function parsePublicKeyText(text: string, purpose: 'authenticated' | 'sign'): Uint8Array {
  const pk = decodeHumanHex(text, 32);
  checkPublicKey(pk, purpose, 'key text');
  return pk;
}

function modPow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = ((base % P) + P) % P;
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}

/** Square root mod p (p ≡ 5 mod 8), or undefined when a is not a square. */
function sqrtModP(a: bigint): bigint | undefined {
  const x = modPow(a, (P + 3n) / 8n);
  if ((x * x - a) % P === 0n) return x;
  const y = (x * modPow(2n, (P - 1n) / 4n)) % P;
  return (y * y - a) % P === 0n ? y : undefined;
}

/**
 * §2: y-coordinates of the edwards25519 points of order 1, 2, 4 and 8, plus p and p + 1.
 * Order 1: y = 1; order 2: y = −1; order 4: y = 0; order 8: points with 2P = (±√−1, 0), i.e. y² = −x²,
 * which on −x² + y² = 1 + d·x²·y² gives d·y⁴ + 2y² − 1 = 0, so y² = (−1 ± √(1 + d)) / d.
 */
function ed25519WeakY(): Set<bigint> {
  const d = (((-121665n * modPow(121666n, P - 2n)) % P) + P) % P;
  const root = sqrtModP((1n + d) % P);
  const weak = new Set<bigint>([1n, P - 1n, 0n, P, P + 1n]);
  if (root === undefined) return weak;
  const invD = modPow(d, P - 2n);
  for (const y2 of [((((-1n + root) * invD) % P) + P) % P, ((((-1n - root) * invD) % P) + P) % P]) {
    const y = sqrtModP(y2);
    if (y !== undefined) {
      weak.add(y);
      weak.add(P - y);
    }
  }
  return weak;
}

let ed25519Weak: Set<bigint> | undefined;

export function isWeakEd25519(pk: Uint8Array): boolean {
  ed25519Weak ??= ed25519WeakY();
  return pk.length !== 32 || ed25519Weak.has(littleEndianTopBitCleared(pk));
}

// ---------------------------------------------------------------------------------------------
// Strict JSON (§4.1)
// ---------------------------------------------------------------------------------------------

/** A JSON number keeps its source text so that §4.1 rule 6 and exact comparisons can use it. */
export class JsonNumber {
  constructor(
    readonly raw: string,
    readonly value: number,
  ) {}
}
export type Json = string | boolean | null | JsonNumber | Json[] | JsonObject;
export type JsonObject = Map<string, Json>;

const MAX_DEPTH = 64; // §4.1 rule 5, §7
const MAX_SAFE = 2n ** 53n - 1n; // §4.1 rule 6
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const INTEGER = /^(?:0|-?[1-9][0-9]*)$/; // §4.1 rule 6: no fraction, exponent or -0

class StrictJsonParser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly integersOnly: boolean,
  ) {}

  parseDocument(): Json {
    const value = this.value(0);
    this.ws();
    if (this.i !== this.s.length) reject('FORMAT_JSON_INVALID', 'data after the JSON text');
    return value;
  }

  private ws(): void {
    while (this.i < this.s.length && ' \t\n\r'.includes(this.s.charAt(this.i))) this.i++;
  }

  private expect(ch: string): void {
    if (this.s.charAt(this.i) !== ch) reject('FORMAT_JSON_INVALID', `expected ${ch} at ${this.i}`);
    this.i++;
  }

  private value(depth: number): Json {
    this.ws();
    const c = this.s.charAt(this.i);
    if (c === '{') return this.object(depth + 1);
    if (c === '[') return this.array(depth + 1);
    if (c === '"') return this.string();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    return this.number();
  }

  private object(depth: number): JsonObject {
    if (depth > MAX_DEPTH) reject('FORMAT_JSON_TOO_DEEP');
    this.expect('{');
    const members: JsonObject = new Map();
    this.ws();
    if (this.s.charAt(this.i) === '}') {
      this.i++;
      return members;
    }
    for (;;) {
      this.ws();
      const name = this.string();
      // §4.1 rule 3: names compared after unescaping, code unit by code unit (JS string equality).
      if (members.has(name)) reject('FORMAT_JSON_DUPLICATE_KEY', name);
      this.ws();
      this.expect(':');
      members.set(name, this.value(depth));
      this.ws();
      if (this.s.charAt(this.i) === '}') {
        this.i++;
        return members;
      }
      this.expect(',');
    }
  }

  private array(depth: number): Json[] {
    if (depth > MAX_DEPTH) reject('FORMAT_JSON_TOO_DEEP');
    this.expect('[');
    const items: Json[] = [];
    this.ws();
    if (this.s.charAt(this.i) === ']') {
      this.i++;
      return items;
    }
    for (;;) {
      items.push(this.value(depth));
      this.ws();
      if (this.s.charAt(this.i) === ']') {
        this.i++;
        return items;
      }
      this.expect(',');
    }
  }

  private hex4(): number {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) reject('FORMAT_JSON_INVALID', 'bad \\u escape');
    this.i += 4;
    return parseInt(h, 16);
  }

  private escape(): string {
    const c = this.s.charAt(this.i++);
    const simple: Record<string, string> = {
      '"': '"',
      '\\': '\\',
      '/': '/',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
    };
    if (c !== 'u') return simple[c] ?? reject('FORMAT_JSON_INVALID', 'bad escape');
    const unit = this.hex4();
    // §4.1 rule 4: a lone surrogate escape is rejected.
    if (unit >= 0xdc00 && unit <= 0xdfff) reject('FORMAT_JSON_INVALID', 'lone low surrogate');
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit);
    if (!this.s.startsWith('\\u', this.i)) reject('FORMAT_JSON_INVALID', 'lone high surrogate');
    this.i += 2;
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) reject('FORMAT_JSON_INVALID', 'lone high surrogate');
    return String.fromCharCode(unit, low);
  }

  private string(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      if (this.i >= this.s.length) reject('FORMAT_JSON_INVALID', 'unterminated string');
      const code = this.s.charCodeAt(this.i);
      if (code === 0x22) {
        this.i++;
        return out;
      }
      if (code < 0x20) reject('FORMAT_JSON_INVALID', 'control character in string');
      if (code === 0x5c) {
        this.i++;
        out += this.escape();
      } else {
        out += this.s.charAt(this.i++);
      }
    }
  }

  private number(): JsonNumber {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (m === null) return reject('FORMAT_JSON_INVALID', `unexpected character at ${this.i}`);
    const raw = m[0];
    this.i += raw.length;
    if (this.integersOnly) {
      // §4.1 rule 6 (HEADER): integer form only, |value| ≤ 2^53 − 1.
      if (!INTEGER.test(raw)) reject('FORMAT_JSON_INVALID', `number ${raw} is not an integer`);
      const big = BigInt(raw);
      if ((big < 0n ? -big : big) > MAX_SAFE) reject('FORMAT_JSON_INVALID', `number ${raw} too large`);
    }
    return new JsonNumber(raw, Number(raw));
  }
}

/** §4.1 rules 2–6 on already length-checked section bytes (rule 1 is done in step 2). */
export function parseStrictJson(bytes: Uint8Array, integersOnly: boolean): Json {
  const text = decodeUtf8(bytes, 'FORMAT_BAD_UTF8');
  if (text.startsWith('\uFEFF')) reject('FORMAT_JSON_INVALID', 'byte order mark');
  return new StrictJsonParser(text, integersOnly).parseDocument();
}

// ---------------------------------------------------------------------------------------------
// HEADER and STATEMENT (§4.2, §4.3)
// ---------------------------------------------------------------------------------------------

export type Kind = 'app' | 'bootstrap';
const MEDIA_TYPES: Record<string, Kind> = {
  'application/vnd.oapp.workflow+json': 'app',
  'application/vnd.oapp.bootstrap+json': 'bootstrap',
};
const AEAD_V1 = 'chacha20-poly1305-stream/v1';
const MAX_CONTENT_SIZE = 4_026_531_840;

interface Content {
  mediaType: string;
  kind: Kind;
  size: number;
  sha256: Uint8Array;
  sha256Hex: string;
}
export type Version = 1 | 2;
export interface Header {
  /** §3.1 frame version. */
  version: Version;
  packageId: string;
  /** §4.2 (v2): the release sequence; null in v1. */
  sequence: number | null;
  createdAt: string;
  /** §4.2 (v2, optional). */
  expiresAt: string | null;
  content: Content;
  packager: Uint8Array;
  recipients: number;
  chunkSize: number;
  plaintextSize: number;
  ciphertextSha256: Uint8Array;
  chain: { packager: string; headerSha256: string }[];
}

/** Shape used for §4.1 rule 7; `true` = a leaf, `'*'` = any JSON (license), arrays = element shape. */
type Shape = { [member: string]: Shape | true | '*' } | [Shape];
const CONTENT_SHAPE: Shape = { mediaType: true, size: true, sha256: true };
const HEADER_SHAPE_V1: Shape = {
  format: true,
  packageId: true,
  createdAt: true,
  content: CONTENT_SHAPE,
  packager: true,
  recipients: true,
  payload: { aead: true, chunkSize: true, plaintextSize: true, ciphertextSha256: true },
  envelope: { chain: [{ packager: true, headerSha256: true }] },
};
/** §4.2: v2 adds `sequence` and `expiresAt` to HEADER. */
const HEADER_SHAPE_V2: Shape = {
  ...(HEADER_SHAPE_V1 as Record<string, Shape | true>),
  sequence: true,
  expiresAt: true,
};
const STATEMENT_SHAPE_V1: Shape = { format: true, packageId: true, content: CONTENT_SHAPE, license: '*' };
/** §4.3: v2 adds `sequence`, `createdAt` and `expiresAt` to STATEMENT. */
const STATEMENT_SHAPE_V2: Shape = {
  ...(STATEMENT_SHAPE_V1 as Record<string, Shape | '*' | true>),
  sequence: true,
  createdAt: true,
  expiresAt: true,
};
const HEADER_FORMAT: Record<Version, string> = { 1: 'oapp/v1', 2: 'oapp/v2' };
const STATEMENT_FORMAT: Record<Version, string> = { 1: 'oapp-statement/v1', 2: 'oapp-statement/v2' };

/** §4.1 rule 7: unknown members anywhere (outside `license`) → FORMAT_UNKNOWN_FIELD. */
function rejectUnknownMembers(value: Json, shape: Shape | true | '*'): void {
  if (shape === true || shape === '*') return;
  if (Array.isArray(shape)) {
    if (Array.isArray(value)) for (const item of value) rejectUnknownMembers(item, shape[0]);
    return;
  }
  if (!(value instanceof Map)) return; // wrong type: reported as FORMAT_BAD_FIELD by the field rules
  for (const [name, member] of value) {
    const sub = Object.prototype.hasOwnProperty.call(shape, name) ? shape[name] : undefined;
    if (sub === undefined) reject('FORMAT_UNKNOWN_FIELD', name);
    rejectUnknownMembers(member, sub);
  }
}

function badField(name: string, why: string): never {
  return reject('FORMAT_BAD_FIELD', `${name}: ${why}`);
}

function objectMember(obj: JsonObject, name: string): JsonObject {
  const v = obj.get(name);
  return v instanceof Map ? v : badField(name, 'missing or not an object');
}

function stringMember(obj: JsonObject, name: string): string {
  const v = obj.get(name);
  return typeof v === 'string' ? v : badField(name, 'missing or not a string');
}

/** An integer member in [min, max]; the integer form itself is §4.1 rule 6. */
function integerMember(obj: JsonObject, name: string, min: number, max: number): number {
  const v = obj.get(name);
  if (!(v instanceof JsonNumber) || !INTEGER.test(v.raw)) return badField(name, 'missing or not an integer');
  if (v.value < min || v.value > max) badField(name, `out of range ${min}…${max}`);
  return v.value;
}

function hex32Member(obj: JsonObject, name: string): Uint8Array {
  const v = stringMember(obj, name);
  if (!isFormatHex(v, 32)) badField(name, 'not 64 lowercase hex characters');
  return sodium.from_hex(v);
}

/** §4.2 packageId: 1–256 UTF-8 bytes, no U+0000–U+001F or U+007F–U+009F. */
function packageIdMember(obj: JsonObject): string {
  const id = stringMember(obj, 'packageId');
  const n = utf8.encode(id).length;
  if (n < 1 || n > 256) badField('packageId', 'length');
  if ([...id].some((ch) => ch.charCodeAt(0) < 0x20 || (ch.charCodeAt(0) >= 0x7f && ch.charCodeAt(0) <= 0x9f)))
    badField('packageId', 'control character');
  return id;
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/** §4.2 createdAt (and v2 expiresAt): `YYYY-MM-DDTHH:MM:SS.sssZ`, a valid date. */
function timestampMember(obj: JsonObject, name = 'createdAt'): string {
  const t = stringMember(obj, name);
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{3}Z$/.exec(t);
  if (m === null) return badField(name, 'form');
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) {
    badField(name, 'not a valid date');
  }
  return t;
}

interface Release {
  sequence: number | null;
  createdAt: string;
  expiresAt: string | null;
}

/** §4.2 / §4.3 (v2): sequence 0 … 2^53 − 1, createdAt, optional expiresAt strictly after createdAt. */
function releaseMembers(root: JsonObject): Release {
  const sequence = integerMember(root, 'sequence', 0, Number.MAX_SAFE_INTEGER);
  const createdAt = timestampMember(root);
  if (!root.has('expiresAt')) return { sequence, createdAt, expiresAt: null };
  const expiresAt = timestampMember(root, 'expiresAt');
  // Fixed-width UTC form: comparing the texts compares the times.
  if (!(expiresAt > createdAt)) badField('expiresAt', 'not after createdAt');
  return { sequence, createdAt, expiresAt };
}

/** §4.1 rule 9: `format` is checked against the frame version before the member set. */
function formatFirst(root: Json, expected: string, what: string): JsonObject {
  if (!(root instanceof Map)) return badField(what, 'not an object');
  if (root.get('format') !== expected) badField('format', `not ${expected}`);
  return root;
}

function contentMember(obj: JsonObject): Content {
  const c = objectMember(obj, 'content');
  const mediaType = stringMember(c, 'mediaType');
  const kind = MEDIA_TYPES[mediaType] ?? badField('content.mediaType', mediaType);
  const size = integerMember(c, 'size', 0, MAX_CONTENT_SIZE);
  const sha256 = hex32Member(c, 'sha256');
  return { mediaType, kind, size, sha256, sha256Hex: toHex(sha256) };
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

function envelopeChain(root: JsonObject): Header['chain'] {
  if (!root.has('envelope')) return [];
  const chain = objectMember(root, 'envelope').get('chain');
  if (!Array.isArray(chain) || chain.length < 1 || chain.length > 16)
    return badField('envelope.chain', '1…16 links');
  return chain.map((link) => {
    if (!(link instanceof Map)) return badField('envelope.chain', 'link not an object');
    return {
      packager: toHex(hex32Member(link, 'packager')),
      headerSha256: toHex(hex32Member(link, 'headerSha256')),
    };
  });
}

/** §4.2 (after §4.1): the HEADER's members, in table order, for the frame version. */
export function parseHeader(bytes: Uint8Array, version: Version): Header {
  const root = formatFirst(parseStrictJson(bytes, true), HEADER_FORMAT[version], 'HEADER');
  rejectUnknownMembers(root, version === 1 ? HEADER_SHAPE_V1 : HEADER_SHAPE_V2);
  const packageId = packageIdMember(root);
  const release: Release =
    version === 1
      ? { sequence: null, createdAt: timestampMember(root), expiresAt: null }
      : releaseMembers(root);
  const content = contentMember(root);
  const packager = hex32Member(root, 'packager');
  const recipients = integerMember(root, 'recipients', 1, Number.MAX_SAFE_INTEGER);
  if (recipients > 1024) reject('FORMAT_TOO_MANY_RECIPIENTS'); // §4.1 field errors
  const payload = objectMember(root, 'payload');
  if (payload.get('aead') !== AEAD_V1) reject('FORMAT_UNSUPPORTED_ALGORITHM'); // any other value, §4.1
  const chunkSize = integerMember(payload, 'chunkSize', 1024, 1_048_576);
  if (!isPowerOfTwo(chunkSize)) badField('payload.chunkSize', 'not a power of two');
  const plaintextSize = integerMember(payload, 'plaintextSize', 0, MAX_CONTENT_SIZE);
  if (plaintextSize !== content.size) badField('payload.plaintextSize', 'differs from content.size');
  const ciphertextSha256 = hex32Member(payload, 'ciphertextSha256');
  const chain = envelopeChain(root);
  return {
    version,
    packageId,
    ...release,
    content,
    packager,
    recipients,
    chunkSize,
    plaintextSize,
    ciphertextSha256,
    chain,
  };
}

export interface ParsedStatement extends Release {
  packageId: string;
  content: Content;
}

/** §4.3 alone (a package's STATEMENT, or the one of a bootstrap signature file, §9.2). */
export function parseStatementOnly(bytes: Uint8Array, version: Version): ParsedStatement {
  const root = formatFirst(parseStrictJson(bytes, true), STATEMENT_FORMAT[version], 'STATEMENT'); // §4.1 rule 6
  rejectUnknownMembers(root, version === 1 ? STATEMENT_SHAPE_V1 : STATEMENT_SHAPE_V2);
  const packageId = packageIdMember(root);
  const release: Release =
    version === 1 ? { sequence: null, createdAt: '', expiresAt: null } : releaseMembers(root);
  const content = contentMember(root);
  if (root.has('license')) objectMember(root, 'license');
  return { packageId, content, ...release };
}

/** §4.3 then the HEADER comparison (FORMAT_STATEMENT_MISMATCH), release members included in v2 (§4.3). */
export function parseStatement(bytes: Uint8Array, header: Header): void {
  const st = parseStatementOnly(bytes, header.version);
  const same =
    st.packageId === header.packageId &&
    st.content.mediaType === header.content.mediaType &&
    st.content.size === header.content.size &&
    st.content.sha256Hex === header.content.sha256Hex;
  if (!same) reject('FORMAT_STATEMENT_MISMATCH');
  if (
    header.version === 2 &&
    (st.sequence !== header.sequence ||
      st.createdAt !== header.createdAt ||
      st.expiresAt !== header.expiresAt)
  )
    reject('FORMAT_STATEMENT_MISMATCH', 'release members');
}

// ---------------------------------------------------------------------------------------------
// Container (§3) read from a whole buffer
// ---------------------------------------------------------------------------------------------

const MAGIC = Uint8Array.of(0x89, 0x4f, 0x41, 0x50, 0x50, 0x0d, 0x0a, 0x1a);
const TAG = { HEADER: 1, STATEMENT: 2, RECIPIENTS: 3, SIGNATURES: 4, PAYLOAD: 5 } as const;
/** §7: declared-length limits of the first four sections. */
const SECTION_LIMIT: Record<number, number> = { 1: 16_384, 2: 16_384, 3: 114_688, 4: 71_808 };

class Cursor {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}
  get remaining(): number {
    return this.bytes.length - this.pos;
  }
  take(n: number): Uint8Array {
    if (this.remaining < n) reject('FORMAT_TRUNCATED');
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  u8(): number {
    return this.take(1)[0] ?? 0;
  }
  u16(): number {
    const b = this.take(2);
    return new DataView(b.buffer, b.byteOffset, 2).getUint16(0, false);
  }
  u32(): number {
    const b = this.take(4);
    return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, false);
  }
}

/** §6 step 1: versions 1 and 2. */
function readFrame(c: Cursor): Version {
  const available = Math.min(MAGIC.length, c.bytes.length);
  for (let i = 0; i < available; i++) if (c.bytes[i] !== MAGIC[i]) reject('FORMAT_BAD_MAGIC');
  c.take(MAGIC.length); // a proper prefix of the magic → FORMAT_TRUNCATED
  const version = c.u16();
  if (version !== 1 && version !== 2) reject('FORMAT_VERSION_UNSUPPORTED');
  if (c.u16() !== 0) reject('FORMAT_BAD_FLAGS');
  return version;
}

/** §6 step 2 for one of the first four sections: tag, limit before reading, then the value. */
function readSection(c: Cursor, tag: number): Uint8Array {
  if (c.u8() !== tag) reject('FORMAT_BAD_SECTIONS', `expected tag ${tag}`);
  const length = c.u32();
  if (length > (SECTION_LIMIT[tag] ?? 0)) reject('FORMAT_SECTION_TOO_LARGE', `tag ${tag}`);
  return c.take(length);
}

export interface Stanza {
  hint: Uint8Array;
  nonce: Uint8Array;
  box: Uint8Array;
}

/** §4.4 / §6 step 5. */
function parseRecipients(value: Uint8Array, header: Header): Stanza[] {
  if (value.length % 112 !== 0 || value.length / 112 !== header.recipients) reject('FORMAT_BAD_RECIPIENTS');
  if (value.length / 112 > 1024) reject('FORMAT_TOO_MANY_RECIPIENTS');
  const stanzas: Stanza[] = [];
  for (let at = 0; at < value.length; at += 112) {
    stanzas.push({
      hint: value.subarray(at, at + 8),
      nonce: value.subarray(at + 8, at + 32),
      box: value.subarray(at + 32, at + 112),
    });
  }
  // §4.4: one stanza per recipient hint, one nonce per stanza.
  const hints = stanzas.map((st) => toHex(st.hint));
  const nonces = stanzas.map((st) => toHex(st.nonce));
  stanzas.forEach((_, i) => {
    if (hints.indexOf(hints[i]!) !== i) reject('FORMAT_DUPLICATE_RECIPIENT');
    if (nonces.indexOf(nonces[i]!) !== i) reject('FORMAT_DUPLICATE_NONCE');
  });
  return stanzas;
}

export interface SignatureRecord {
  signerPk: Uint8Array;
  signText: Uint8Array;
  signature: Uint8Array;
}

/** §4.5 / §6 step 6: records back to back, nothing else; at most 64. */
function parseSignatures(value: Uint8Array): SignatureRecord[] {
  const c = new Cursor(value);
  const records: SignatureRecord[] = [];
  const malformed = (): never => reject('FORMAT_BAD_SIGNATURES');
  while (c.remaining > 0) {
    if (records.length === 64) reject('FORMAT_TOO_MANY_SIGNATURES');
    if (c.remaining < 34) malformed();
    const signerPk = c.take(32);
    const length = c.u16();
    if (length > 1024 || c.remaining < length + 64) malformed();
    const signText = c.take(length);
    decodeUtf8(signText, 'FORMAT_BAD_SIGNATURES'); // code: see report (§4.5 does not name one)
    records.push({ signerPk, signText, signature: c.take(64) });
  }
  return records;
}

/** §4.6: N and the exact PAYLOAD length. */
function chunkCount(plaintextSize: number, chunkSize: number): number {
  return plaintextSize === 0 ? 1 : Math.ceil(plaintextSize / chunkSize);
}

// ---------------------------------------------------------------------------------------------
// Policy (§6) and signatures (§5.1)
// ---------------------------------------------------------------------------------------------

export interface Policy {
  packageId: string;
  packagerIdentities: Uint8Array[];
  requiredSigners: Uint8Array[];
  additionalSigners: Uint8Array[];
  requiredAdditionalSignerCount: number;
  /** §6.1: the release floor (optional). */
  minimumSequence?: number;
}

/** §6 step 8 (and §2: weak keys are rejected wherever keys are registered). */
function validatePolicy(policy: Policy): void {
  const all = [...policy.packagerIdentities, ...policy.requiredSigners, ...policy.additionalSigners];
  if (all.some((k) => k.length !== 32)) reject('POLICY_INVALID', 'key length');
  const required = new Set(policy.requiredSigners.map(toHex));
  if (policy.additionalSigners.some((k) => required.has(toHex(k)))) reject('POLICY_INVALID', 'not disjoint');
  const k = policy.requiredAdditionalSignerCount;
  if (!Number.isInteger(k) || k < 0 || k > policy.additionalSigners.length) reject('POLICY_INVALID', 'K');
  // §2: a key's own defect has the key's code in a policy too.
  for (const pk of [...policy.requiredSigners, ...policy.additionalSigners])
    checkPublicKey(pk, 'sign', 'policy signer');
  for (const pk of policy.packagerIdentities) checkPublicKey(pk, 'authenticated', 'policy packager');
}

/** §5.1: M = "OAPPv<version>" SP dec(len T) SP T SP dec(len S) SP S SP dec(len X) SP X. */
export function signingMessage(
  kind: Kind,
  statement: Uint8Array,
  signText: Uint8Array,
  version: Version,
): Uint8Array {
  const type = utf8.encode(`application/vnd.oapp.statement.${kind}+json`);
  const field = (bytes: Uint8Array): Uint8Array => concat(utf8.encode(` ${bytes.length} `), bytes);
  return concat(utf8.encode(`OAPPv${version}`), field(type), field(statement), field(signText));
}

/** §6 step 12 (also §9: administrators as additional signers). */
function checkSignatures(
  policy: Pick<Policy, 'requiredSigners' | 'additionalSigners' | 'requiredAdditionalSignerCount'>,
  kind: Kind,
  version: Version,
  statement: Uint8Array,
  records: SignatureRecord[],
): void {
  const named = new Set([...policy.requiredSigners, ...policy.additionalSigners].map(toHex));
  const valid = new Set<string>();
  for (const r of records) {
    const key = toHex(r.signerPk);
    if (!named.has(key)) continue; // records of other keys: neither verified nor counted
    const m = signingMessage(kind, statement, r.signText, version);
    if (!sodium.crypto_sign_verify_detached(r.signature, m, r.signerPk))
      reject('POLICY_SIGNATURE_INVALID', key);
    valid.add(key);
  }
  for (const k of policy.requiredSigners) {
    if (!valid.has(toHex(k))) reject('POLICY_REQUIRED_SIGNER_MISSING', toHex(k));
  }
  const found = new Set(policy.additionalSigners.map(toHex).filter((k) => valid.has(k))).size;
  const needed = policy.requiredAdditionalSignerCount;
  if (found < needed) reject('POLICY_SIGNER_THRESHOLD_NOT_MET', `found ${found} of ${needed}`);
}

// ---------------------------------------------------------------------------------------------
// Recipient and payload (§6 steps 13–15)
// ---------------------------------------------------------------------------------------------

/** §6 step 13. Returns fileKey. */
function openStanza(
  stanzas: Stanza[],
  header: Header,
  headerBytes: Uint8Array,
  secretKey: Uint8Array,
): Uint8Array {
  const myHint = sha256(sodium.crypto_scalarmult_base(secretKey)).subarray(0, 8);
  const mine = stanzas.filter((s) => toHex(s.hint) === toHex(myHint)); // hints are public lookup aids
  if (mine.length === 0) reject('CRYPTO_NO_MATCHING_RECIPIENT');
  try {
    sodium.crypto_scalarmult(secretKey, header.packager); // libsodium fails on an all-zero result
  } catch {
    reject('CRYPTO_WEAK_KEY', 'all-zero X25519 result');
  }
  const headerDigest = sha256(headerBytes);
  for (const s of mine) {
    let opened: Uint8Array;
    try {
      opened = sodium.crypto_box_open_easy(s.box, s.nonce, header.packager, secretKey);
    } catch {
      continue;
    }
    if (opened.length !== 64) continue;
    if (!constantTimeEqual(opened.subarray(32, 64), headerDigest)) reject('CRYPTO_HEADER_MISMATCH');
    return opened.slice(0, 32);
  }
  return reject('CRYPTO_AUTH_FAILED', 'no stanza opened');
}

/** §4.6: nonce(i) = i as 11-byte big-endian ‖ final(i). */
function chunkNonce(i: number, final: boolean): Uint8Array {
  const nonce = new Uint8Array(12);
  new DataView(nonce.buffer).setUint32(7, i, false); // N < 2^32, so the upper 7 bytes stay zero
  nonce[11] = final ? 1 : 0;
  return nonce;
}

/** §6 steps 14–15. */
function decryptPayload(c: Cursor, header: Header, fileKey: Uint8Array): Uint8Array {
  const payloadKey = hkdfSha256(fileKey, new Uint8Array(0), utf8.encode('oapp/v1 payload key'), 32);
  const n = chunkCount(header.plaintextSize, header.chunkSize);
  const start = c.pos;
  const plain: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const size = i < n - 1 ? header.chunkSize : header.plaintextSize - (n - 1) * header.chunkSize;
    const sealed = c.take(size + 16);
    try {
      plain.push(
        sodium.crypto_aead_chacha20poly1305_ietf_decrypt(
          null,
          sealed,
          null,
          chunkNonce(i, i === n - 1),
          payloadKey,
        ),
      );
    } catch {
      reject('CRYPTO_AUTH_FAILED', `chunk ${i}`);
    }
  }
  if (c.remaining > 0) reject('FORMAT_TRAILING_DATA');
  if (!constantTimeEqual(sha256(c.bytes.subarray(start, c.pos)), header.ciphertextSha256)) {
    reject('CRYPTO_CIPHERTEXT_MISMATCH');
  }
  const plaintext = concat(...plain);
  if (!constantTimeEqual(sha256(plaintext), header.content.sha256)) reject('CRYPTO_CONTENT_MISMATCH');
  return plaintext;
}

// ---------------------------------------------------------------------------------------------
// §6: verify and open, step by step
// ---------------------------------------------------------------------------------------------

/** §6 step 13a inputs. */
export interface Freshness {
  newest?: { sequence: number; contentSha256: string };
  /** Default: the current time. */
  now?: Date;
  /** Default 300 (§6 step 13a). */
  clockSkewSeconds?: number;
  allowSequence?: number;
}

export interface OpenOptions {
  policy: Policy;
  /** The deployment's `authenticated` (X25519) secret key. */
  secretKey: Uint8Array;
  expectKind: Kind;
  /** The reader's configured plaintext maximum (§6 step 3, §7). */
  maxPlaintextSize: number;
  freshness?: Freshness;
}

export type Verdict = 'first' | 'newer' | 'same' | 'allowed-downgrade' | 'unversioned';

export interface Opened {
  header: Header;
  content: Uint8Array;
  verdict: Verdict;
}

const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER; // §4.2: 2^53 − 1

/**
 * §6 step 8 with §6.1: the floor and the freshness inputs in their ranges (sequences 0 … 2^53 − 1, the newest's
 * content SHA-256 64 hex digits, a valid clock, a skew 0 … 86 400), else POLICY_INVALID. An allowed sequence below
 * the floor is no error: it never applies (step 13a.2).
 */
export function validateFreshnessInputs(minimumSequence: number | undefined, f: Freshness): void {
  const sequence = (v: unknown, what: string): void => {
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_SEQUENCE))
      reject('POLICY_INVALID', what);
  };
  sequence(minimumSequence, 'minimumSequence');
  if (f.newest !== undefined) {
    if (f.newest.sequence === undefined) reject('POLICY_INVALID', 'newest.sequence');
    sequence(f.newest.sequence, 'newest.sequence');
    if (typeof f.newest.contentSha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(f.newest.contentSha256))
      reject('POLICY_INVALID', 'newest.contentSha256');
  }
  sequence(f.allowSequence, 'allowSequence');
  if (f.now !== undefined && (!(f.now instanceof Date) || Number.isNaN(f.now.getTime())))
    reject('POLICY_INVALID', 'now');
  const skew = f.clockSkewSeconds;
  if (skew !== undefined && (!Number.isInteger(skew) || skew < 0 || skew > 86_400))
    reject('POLICY_INVALID', 'skew');
}

/** §6 step 13a, in its order: v1 under a floor or a newest; the floor; newest; expiry. */
export function freshness(
  release: { sequence: number | null; expiresAt: string | null },
  contentSha256Hex: string,
  minimumSequence: number | undefined,
  f: Freshness = {},
): Verdict {
  const { sequence } = release;
  const newest = f.newest;
  if (sequence === null) {
    if (minimumSequence !== undefined) reject('POLICY_BELOW_MINIMUM', 'v1 under a floor');
    if (newest !== undefined) reject('POLICY_ROLLBACK', 'v1 after a remembered newest');
    return 'unversioned';
  }
  if (minimumSequence !== undefined && sequence < minimumSequence) reject('POLICY_BELOW_MINIMUM');
  let verdict: Verdict = 'first';
  if (newest !== undefined) {
    const sameContent = contentSha256Hex === newest.contentSha256.toLowerCase();
    if (sequence > newest.sequence) verdict = 'newer';
    else if (sequence === newest.sequence && sameContent) verdict = 'same';
    else if (f.allowSequence !== undefined && sequence === f.allowSequence) verdict = 'allowed-downgrade';
    else if (sequence < newest.sequence) reject('POLICY_ROLLBACK');
    else reject('POLICY_SEQUENCE_REUSED');
  }
  if (release.expiresAt !== null) {
    const now = (f.now ?? new Date()).getTime();
    const skew = f.clockSkewSeconds ?? 300;
    if (now > Date.parse(release.expiresAt) + skew * 1000) reject('POLICY_EXPIRED');
  }
  return verdict;
}

export function openPackage(bytes: Uint8Array, options: OpenOptions): Opened {
  const c = new Cursor(bytes);
  const version = readFrame(c); // 1
  // 2: one section at a time, each parsed before the next section header is read.
  const headerBytes = readSection(c, TAG.HEADER);
  const header = parseHeader(headerBytes, version); // 3
  if (header.content.kind !== options.expectKind) reject('FORMAT_WRONG_KIND');
  if (header.plaintextSize > options.maxPlaintextSize) reject('FORMAT_PAYLOAD_TOO_LARGE');
  const statementBytes = readSection(c, TAG.STATEMENT);
  parseStatement(statementBytes, header); // 4
  const stanzas = parseRecipients(readSection(c, TAG.RECIPIENTS), header); // 5
  const records = parseSignatures(readSection(c, TAG.SIGNATURES)); // 6
  readPayloadHeader(c, header); // 7
  validatePolicy(options.policy); // 8
  validateFreshnessInputs(options.policy.minimumSequence, options.freshness ?? {}); // 8 (§6.1 inputs)
  if (!constantTimeEqual(utf8.encode(header.packageId), utf8.encode(options.policy.packageId))) {
    reject('POLICY_PACKAGE_ID_MISMATCH'); // 9
  }
  checkPublicKey(header.packager, 'authenticated', 'packager'); // 10
  if (!options.policy.packagerIdentities.some((k) => constantTimeEqual(k, header.packager))) {
    reject('POLICY_PACKAGER_NOT_TRUSTED'); // 11
  }
  checkSignatures(options.policy, header.content.kind, version, statementBytes, records); // 12
  const fileKey = openStanza(stanzas, header, headerBytes, options.secretKey); // 13
  let verdict: Verdict;
  try {
    verdict = freshness(header, header.content.sha256Hex, options.policy.minimumSequence, options.freshness); // 13a
  } catch (e) {
    sodium.memzero(fileKey);
    throw e;
  }
  const content = decryptPayload(c, header, fileKey); // 14, 15
  sodium.memzero(fileKey);
  return { header, content, verdict };
}

/** §6 step 7 (tag per §3.2): the declared length MUST equal plaintextSize + 16·N. */
function readPayloadHeader(c: Cursor, header: Header): void {
  if (c.u8() !== TAG.PAYLOAD) reject('FORMAT_BAD_SECTIONS', 'expected PAYLOAD');
  const declared = c.u32();
  const expected = header.plaintextSize + 16 * chunkCount(header.plaintextSize, header.chunkSize);
  if (declared < expected) reject('FORMAT_TRUNCATED', 'PAYLOAD length too short');
  if (declared > expected) reject('FORMAT_TRAILING_DATA', 'PAYLOAD length too long');
}

// ---------------------------------------------------------------------------------------------
// Keys in text form (§11)
// ---------------------------------------------------------------------------------------------

export interface KeyTuple {
  senderPk: Uint8Array;
  secretKey: Uint8Array;
}

/** §11: `<sender public key hex>/<secret key hex>`, exactly one `/`. */
export function parseKeyTuple(text: string): KeyTuple {
  const parts = text.split('/');
  if (parts.length !== 2) reject('KEY_TEXT_INVALID', 'expected exactly one /');
  const senderPk = decodeHumanHex(parts[0] ?? '', 32);
  if (isWeakX25519(senderPk)) reject('CRYPTO_WEAK_KEY', 'sender');
  return { senderPk, secretKey: decodeHumanHex(parts[1] ?? '', 32) };
}

/** §11: comma-separated, each entry trimmed, empty entries ignored, errors name the 1-based position. */
export function parseKeyTupleList(text: string): KeyTuple[] {
  const tuples: KeyTuple[] = [];
  text.split(',').forEach((entry, index) => {
    const trimmed = entry.trim();
    if (trimmed === '') return;
    try {
      tuples.push(parseKeyTuple(trimmed));
    } catch (e) {
      if (e instanceof SpecReject) reject(e.code, `entry ${index + 1}`);
      throw e;
    }
  });
  return tuples;
}

// ---------------------------------------------------------------------------------------------
// Encrypted bootstrap (§9)
// ---------------------------------------------------------------------------------------------

const MAX_BOOTSTRAP = 4 * 1024 * 1024;

/** §9.1 with §1: trim leading/trailing ASCII whitespace, which is TAB, LF, CR and SPACE only. */
function trimAsciiWhitespace(s: string): string {
  return s.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
}

/** §9: "Text whose first 12 Base64 characters decode to bytes starting with the magic". */
export function looksLikeEncryptedBootstrap(text: string): boolean {
  const head = trimAsciiWhitespace(text).slice(0, 12);
  if (head.length < 12) return false;
  try {
    const bytes = decodeCanonicalBase64(head, 'FORMAT_BAD_BASE64');
    return MAGIC.every((b, i) => bytes[i] === b);
  } catch {
    return false;
  }
}

/** §9.1: the administrators a deployment requires: Ed25519 keys and K (1 … number of keys). */
export interface Administrators {
  keys: Uint8Array[];
  threshold: number;
}

export function decryptBootstrap(
  text: string,
  agentBootstrapSecretKey: string,
  administrators?: Administrators,
): Uint8Array {
  const bytes = decodeCanonicalBase64(trimAsciiWhitespace(text), 'FORMAT_BAD_BASE64');
  const { senderPk, secretKey } = parseKeyTuple(agentBootstrapSecretKey);
  const policy: Policy = {
    packageId: 'bootstrap',
    packagerIdentities: [senderPk],
    requiredSigners: [],
    // §9.1: administrators are additional signers with K = threshold; without them no record counts.
    additionalSigners: administrators?.keys ?? [],
    requiredAdditionalSignerCount: administrators?.threshold ?? 0,
  };
  return openPackage(bytes, { policy, secretKey, expectKind: 'bootstrap', maxPlaintextSize: MAX_BOOTSTRAP })
    .content;
}

/** §9.2: a detached bootstrap signature file, with the verifier's clock and skew (default 300, §6.1). */
export function verifyBootstrapSignature(
  bootstrap: Uint8Array,
  signatureFile: Uint8Array,
  administrators: Administrators,
  inputs: { now?: Date; clockSkewSeconds?: number } = {},
): { sequence: number; createdAt: string; expiresAt: string | null } {
  // The verifier's own inputs first: the administrators (§9: 1 ≤ K ≤ their number, keys by §2) and the clock.
  const k = administrators.threshold;
  if (administrators.keys.length === 0 || !Number.isInteger(k) || k < 1 || k > administrators.keys.length)
    reject('POLICY_INVALID', 'administrators');
  validatePolicy({
    packageId: 'bootstrap',
    packagerIdentities: [],
    requiredSigners: [],
    additionalSigners: administrators.keys,
    requiredAdditionalSignerCount: k,
  });
  validateFreshnessInputs(undefined, inputs);
  // 1: the file (size, strict JSON), `format` first, the member set, both Base64 members, then their contents.
  if (signatureFile.length > 131_072) reject('FORMAT_SECTION_TOO_LARGE');
  const root = formatFirst(
    parseStrictJson(signatureFile, false),
    'oapp-bootstrap-signature/v1',
    'signature file',
  );
  for (const name of root.keys())
    if (!['format', 'statement', 'signatures'].includes(name)) reject('FORMAT_UNKNOWN_FIELD', name);
  const statementBytes = decodeCanonicalBase64(stringMember(root, 'statement'), 'FORMAT_BAD_BASE64');
  const signaturesBytes = decodeCanonicalBase64(stringMember(root, 'signatures'), 'FORMAT_BAD_BASE64');
  if (statementBytes.length > 16_384) reject('FORMAT_SECTION_TOO_LARGE');
  const st = parseStatementOnly(statementBytes, 2);
  if (st.content.kind !== 'bootstrap') reject('FORMAT_WRONG_KIND');
  if (st.packageId !== 'bootstrap') badField('packageId', 'not "bootstrap"');
  if (signaturesBytes.length > 71_808) reject('FORMAT_SECTION_TOO_LARGE');
  const records = parseSignatures(signaturesBytes);
  checkSignatures(
    {
      requiredSigners: [],
      additionalSigners: administrators.keys,
      requiredAdditionalSignerCount: administrators.threshold,
    },
    'bootstrap',
    2,
    statementBytes,
    records,
  );
  if (st.content.size !== bootstrap.length || !constantTimeEqual(sha256(bootstrap), st.content.sha256))
    reject('CRYPTO_CONTENT_MISMATCH');
  freshness(st, st.content.sha256Hex, undefined, inputs); // 4: step 13a.4 with the verifier's clock and skew
  return { sequence: st.sequence ?? 0, createdAt: st.createdAt, expiresAt: st.expiresAt };
}

// ---------------------------------------------------------------------------------------------
// Encrypted strings (§10)
// ---------------------------------------------------------------------------------------------

const MAX_STRING_TEXT = 87_439;

export function decryptString(text: string, candidates: KeyTuple[]): Uint8Array {
  if (!text.startsWith('-2/')) reject('CRYPTO_BAD_PREFIX'); // 1
  if (text.length > MAX_STRING_TEXT) reject('CRYPTO_TOO_LARGE');
  const envelope = decodeCanonicalBase64(text.slice(3), 'CRYPTO_BAD_BASE64'); // 2
  if (envelope.length < 40) reject('CRYPTO_TRUNCATED'); // 3
  if (candidates.length === 0) reject('CRYPTO_NO_MATCHING_KEY'); // 4
  const nonce = envelope.subarray(0, 24);
  const box = envelope.subarray(24);
  for (const { senderPk, secretKey } of candidates) {
    try {
      return sodium.crypto_box_open_easy(box, nonce, senderPk, secretKey);
    } catch {
      // try the next candidate
    }
  }
  return reject('CRYPTO_AUTH_FAILED');
}

// ---------------------------------------------------------------------------------------------
// Displaying untrusted text (§6.4)
// ---------------------------------------------------------------------------------------------

/** §6.4: the code points shown as \u{XXXX}, as listed there. */
function mustEscape(cp: number): boolean {
  return (
    cp <= 0x1f ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0x061c ||
    cp === 0x200e ||
    cp === 0x200f ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069) ||
    (cp >= 0x200b && cp <= 0x200d) ||
    cp === 0x2060 ||
    cp === 0xfeff ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    (cp >= 0xd800 && cp <= 0xdfff)
  );
}

/** §6.4: the display form of a string. */
export function displayForm(text: string): string {
  const parts = Array.from(text, (ch) => {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '\\' || ch === '"') return `\\${ch}`;
    return mustEscape(cp) ? `\\u{${cp.toString(16).toUpperCase().padStart(4, '0')}}` : ch;
  });
  return `"${parts.join('')}"`;
}
