/**
 * Sandbox-side helpers (run inside QuickJS): UTF-8, hex, Base64, CRC-32, the host-style object serialiser, the
 * byte reader and the doc() schema check. QuickJS has no TextEncoder, Buffer or atob, so these are written out
 * here. Bundled into the helper script `util-factory.ts`, which the prelude compiles on first use in a realm
 * (compiling it in every run cost ~4 ms, ADR 0040).
 *
 * These functions are per realm, never handed to a script: every object a script can reach (`bytes()`,
 * `crypto()`, doc builders, readers) is made per run, in `extras.ts` or here by `memoryReader`.
 * Arguments come from scripts: they are typed `unknown` and converted the way the context API documents.
 */

import { badArgument, codedError, integerArg, notA, textArg } from './args.js';

export function unsupported(name: string): Error {
  return codedError('ENGINE_UNSUPPORTED', name + ' is not supported by this agent');
}

export function utf8Encode(str: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < str.length; i++) {
    let c = str.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < str.length) {
      const d = str.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

export function utf8Decode(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length;) {
    const c = b[i++]!;
    let cp = 0xfffd;
    if (c < 0x80) cp = c;
    else if (c >= 0xc2 && c < 0xe0 && i < b.length) cp = ((c & 31) << 6) | (b[i++]! & 63);
    else if (c >= 0xe0 && c < 0xf0 && i + 1 < b.length) {
      cp = ((c & 15) << 12) | ((b[i]! & 63) << 6) | (b[i + 1]! & 63);
      i += 2;
    } else if (c >= 0xf0 && c < 0xf5 && i + 2 < b.length) {
      cp = ((c & 7) << 18) | ((b[i]! & 63) << 12) | ((b[i + 1]! & 63) << 6) | (b[i + 2]! & 63);
      i += 3;
    }
    s += String.fromCodePoint(cp > 0x10ffff ? 0xfffd : cp);
  }
  return s;
}

/**
 * Bytes from what a call documents as bytes (SPEC.md §7.1): a `Uint8Array` (as it is), an `ArrayBuffer`, a typed
 * array, an array of integers (each stored modulo 256) or a string (its UTF-8); null and undefined are no bytes.
 * Anything else — a number, an object, a ByteReader — is refused, never turned into the text `[object Object]`.
 */
export function toBytes(x: unknown, what = 'bytes'): Uint8Array {
  if (x instanceof Uint8Array) return x;
  if (typeof x === 'string') return utf8Encode(x);
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (Array.isArray(x)) return byteArray(x, what);
  if (x === null || x === undefined) return new Uint8Array(0);
  throw notA(what, 'bytes (a Uint8Array, an ArrayBuffer, a typed array, an array of numbers or a string)', x);
}

function byteArray(a: unknown[], what: string): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (typeof v !== 'number' || !Number.isInteger(v)) throw notA(what + '[' + i + ']', 'an integer', v);
    out[i] = v;
  }
  return out;
}

/** A buffer a call writes into: only a `Uint8Array` (a converted copy would be written and dropped). */
export function byteTarget(x: unknown, what: string): Uint8Array {
  if (!(x instanceof Uint8Array)) throw notA(what, 'a Uint8Array', x);
  return x;
}

// Upper case, as the reference's `binaryToHex` (SPEC.md §7.1; a public test compares a digest's hex to upper case).
const HEX = '0123456789ABCDEF';

export function toHex(b: unknown): string {
  const u = toBytes(b, 'binaryToHex: b');
  let s = '';
  for (let i = 0; i < u.length; i++) s += HEX[u[i]! >> 4]! + HEX[u[i]! & 15]!;
  return s;
}

export function fromHex(h: unknown): Uint8Array {
  const t = textArg(h, 'hexToBinary: h');
  if (t.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(t))
    throw badArgument('hexToBinary: h is not a hex string of even length');
  const out = new Uint8Array(t.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(t.substr(i * 2, 2), 16);
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function toBase64(b: unknown): string {
  const u = toBytes(b, 'binaryToBase64: b');
  let s = '';
  for (let i = 0; i < u.length; i += 3) {
    const n = (u[i]! << 16) | ((u[i + 1] || 0) << 8) | (u[i + 2] || 0);
    s +=
      B64[(n >> 18) & 63]! +
      B64[(n >> 12) & 63]! +
      (i + 1 < u.length ? B64[(n >> 6) & 63]! : '=') +
      (i + 2 < u.length ? B64[n & 63]! : '=');
  }
  return s;
}

export function fromBase64(s: unknown): Uint8Array {
  const t = textArg(s, 'base64ToBinary: s').replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(t) || t.length % 4 === 1)
    throw badArgument('base64ToBinary: s is not a Base64 string');
  const out = new Uint8Array(Math.floor((t.length * 3) / 4));
  let n = 0,
    bits = 0,
    j = 0;
  for (let i = 0; i < t.length; i++) {
    n = (n << 6) | B64.indexOf(t[i]!);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (n >> bits) & 255;
    }
  }
  return out;
}

let crcTable: Uint32Array | undefined;

export function crc32(s: unknown): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[i] = c >>> 0;
    }
  }
  const b = toBytes(s, 'hash: s');
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = crcTable[(c ^ b[i]!) & 255]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** docs/interfaces.md §5.8: the host serialiser wrote `{"status" : 200}`; reproduced for object bodies. */
export function serialize(v: unknown, depth: number): string {
  if (depth > 64) throw badArgument('setBody: x is nested deeper than 64 levels');
  if (v === null || typeof v !== 'object') {
    const j = JSON.stringify(v) as string | undefined;
    return j === undefined ? 'null' : j;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function')
    return serialize((v as { toJSON(): unknown }).toJSON(), depth + 1);
  if (Array.isArray(v)) return '[' + v.map((x) => serialize(x, depth + 1)).join(', ') + ']';
  const o = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o)) {
    if (o[k] === undefined || typeof o[k] === 'function') continue;
    parts.push(JSON.stringify(k) + ' : ' + serialize(o[k], depth + 1));
  }
  return '{' + parts.join(', ') + '}';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function deepMerge(a: unknown, b: unknown): unknown {
  if (!isObject(a) || !isObject(b)) return b;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(a))
    Object.defineProperty(out, k, { value: a[k], enumerable: true, writable: true, configurable: true });
  for (const k of Object.keys(b)) {
    Object.defineProperty(out, k, {
      value: Object.prototype.hasOwnProperty.call(out, k) ? deepMerge(out[k], b[k]) : b[k],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

export function concat(a: unknown, b: unknown): Uint8Array {
  const x = toBytes(a, 'concat: a'),
    y = toBytes(b, 'concat: b');
  const o = new Uint8Array(x.length + y.length);
  o.set(x, 0);
  o.set(y, x.length);
  return o;
}

export function memoryReader(buf: unknown) {
  const data = toBytes(buf, 'reader: b');
  let pos = 0;
  return {
    read(n?: unknown) {
      const left = data.length - pos;
      const k = n === undefined ? left : Math.min(integerArg(n, 'read: n', 0), left);
      const o = data.slice(pos, pos + k);
      pos += k;
      return o;
    },
    readAll() {
      const o = data.slice(pos);
      pos = data.length;
      return o;
    },
    available() {
      return data.length - pos;
    },
  };
}

/**
 * A JSON Schema subset for doc(): type, enum, const, required, properties, additionalProperties (false or a
 * schema), items, min/maxLength, minimum/maximum, min/maxItems, pattern. The fields are typed as the subset
 * documents them; a script may put anything there, and every use below converts or compares it as before.
 */
interface Schema {
  type?: unknown;
  enum?: unknown;
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: unknown;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: unknown;
  required?: unknown;
  properties?: Record<string, unknown>;
  additionalProperties?: unknown;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(want: unknown, got: string): boolean {
  return want === got || (want === 'number' && got === 'integer');
}

/** Returns the first failure of `v` against `schema`, or null. */
export function validate(schemaIn: unknown, v: unknown, path: string, depth: number): string | null {
  if (schemaIn === true || schemaIn === undefined || schemaIn === null || typeof schemaIn !== 'object')
    return null;
  const schema = schemaIn as Schema;
  if (depth > 64) return path + ': schema nested too deeply';
  const t = typeOf(v);
  if (schema.type !== undefined) {
    const types = (Array.isArray(schema.type) ? schema.type : [schema.type]) as unknown[];
    if (!types.some((w) => typeMatches(w, t)))
      return path + ': expected ' + types.join(' or ') + ', found ' + t;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    return path + ': not one of the allowed values';
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(v))
    return path + ': not the expected constant';
  if (t === 'string') {
    const s = v as string;
    if (schema.minLength !== undefined && s.length < schema.minLength)
      return path + ': shorter than ' + schema.minLength;
    if (schema.maxLength !== undefined && s.length > schema.maxLength)
      return path + ': longer than ' + schema.maxLength;
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(s))
      return path + ': does not match the pattern';
  }
  if (t === 'number' || t === 'integer') {
    const n = v as number;
    if (schema.minimum !== undefined && n < schema.minimum) return path + ': below ' + schema.minimum;
    if (schema.maximum !== undefined && n > schema.maximum) return path + ': above ' + schema.maximum;
  }
  if (t === 'array') {
    const a = v as unknown[];
    if (schema.minItems !== undefined && a.length < schema.minItems)
      return path + ': fewer than ' + schema.minItems + ' items';
    if (schema.maxItems !== undefined && a.length > schema.maxItems)
      return path + ': more than ' + schema.maxItems + ' items';
    for (let i = 0; schema.items && i < a.length; i++) {
      const e = validate(schema.items, a[i], path + '/' + i, depth + 1);
      if (e) return e;
    }
  }
  if (t === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of (Array.isArray(schema.required) ? schema.required : []) as string[])
      if (!Object.prototype.hasOwnProperty.call(o, k)) return path + ': missing ' + k;
    const props = schema.properties || {};
    for (const k of Object.keys(o)) {
      const sub = Object.prototype.hasOwnProperty.call(props, k) ? props[k] : schema.additionalProperties;
      if (sub === false) return path + ': unexpected property ' + k;
      const e = validate(sub, o[k], path + '/' + k, depth + 1);
      if (e) return e;
    }
  }
  return null;
}
