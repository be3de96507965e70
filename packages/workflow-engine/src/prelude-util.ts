import { PRELUDE_EXTRAS } from './prelude-extras.js';

/**
 * Sandbox-side helpers (plain JavaScript for QuickJS): UTF-8, hex, Base64, CRC-32, the host-style object
 * serialiser, the byte reader and the doc() schema check. QuickJS has no TextEncoder, Buffer or atob, so these
 * are written out here. The source is one expression evaluating to the helper object; the context prelude
 * carries it as a string and compiles it on first use (compiling it in every run cost ~4 ms, ADR 0040).
 */
export const PRELUDE_UTIL = String.raw`
(function (env) {
  'use strict';
  function unsupported(name) {
    const e = new Error('ENGINE_UNSUPPORTED: ' + name + ' is not supported by this agent');
    e.code = 'ENGINE_UNSUPPORTED';
    return e;
  }
  function utf8Encode(s) {
    s = String(s);
    const out = [];
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
        else c = 0xfffd;
      } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return new Uint8Array(out);
  }
  function utf8Decode(b) {
    let s = '';
    for (let i = 0; i < b.length; ) {
      const c = b[i++];
      let cp = 0xfffd;
      if (c < 0x80) cp = c;
      else if (c >= 0xc2 && c < 0xe0 && i < b.length) cp = ((c & 31) << 6) | (b[i++] & 63);
      else if (c >= 0xe0 && c < 0xf0 && i + 1 < b.length) { cp = ((c & 15) << 12) | ((b[i] & 63) << 6) | (b[i + 1] & 63); i += 2; }
      else if (c >= 0xf0 && c < 0xf5 && i + 2 < b.length) {
        cp = ((c & 7) << 18) | ((b[i] & 63) << 12) | ((b[i + 1] & 63) << 6) | (b[i + 2] & 63); i += 3;
      }
      s += String.fromCodePoint(cp > 0x10ffff ? 0xfffd : cp);
    }
    return s;
  }
  function toBytes(x) {
    if (x instanceof Uint8Array) return x;
    if (x instanceof ArrayBuffer) return new Uint8Array(x);
    if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
    if (Array.isArray(x)) return new Uint8Array(x);
    if (x === null || x === undefined) return new Uint8Array(0);
    return utf8Encode(String(x));
  }
  const HEX = '0123456789abcdef';
  function toHex(b) { b = toBytes(b); let s = ''; for (let i = 0; i < b.length; i++) s += HEX[b[i] >> 4] + HEX[b[i] & 15]; return s; }
  function fromHex(h) {
    h = String(h);
    if (h.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(h)) throw new TypeError('hexToBinary: not a hex string');
    const out = new Uint8Array(h.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(i * 2, 2), 16);
    return out;
  }
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  function toBase64(b) {
    b = toBytes(b); let s = '';
    for (let i = 0; i < b.length; i += 3) {
      const n = (b[i] << 16) | ((b[i + 1] || 0) << 8) | (b[i + 2] || 0);
      s += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] + (i + 1 < b.length ? B64[(n >> 6) & 63] : '=') + (i + 2 < b.length ? B64[n & 63] : '=');
    }
    return s;
  }
  function fromBase64(s) {
    s = String(s).replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
    if (!/^[A-Za-z0-9+/]*$/.test(s) || s.length % 4 === 1) throw new TypeError('base64ToBinary: not a Base64 string');
    const out = new Uint8Array(Math.floor((s.length * 3) / 4));
    let n = 0, bits = 0, j = 0;
    for (let i = 0; i < s.length; i++) {
      n = (n << 6) | B64.indexOf(s[i]); bits += 6;
      if (bits >= 8) { bits -= 8; out[j++] = (n >> bits) & 255; }
    }
    return out;
  }
  let crcTable;
  function crc32(s) {
    if (!crcTable) {
      crcTable = new Uint32Array(256);
      for (let i = 0; i < 256; i++) { let c = i; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; crcTable[i] = c >>> 0; }
    }
    const b = toBytes(s); let c = 0xffffffff;
    for (let i = 0; i < b.length; i++) c = crcTable[(c ^ b[i]) & 255] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  }
  // interfaces.md §5.8: the host serialiser wrote {"status" : 200}; reproduced for object bodies.
  function serialize(v, depth) {
    if (depth > 64) throw new RangeError('setBody: object nested too deeply');
    if (v === null || typeof v !== 'object') { const j = JSON.stringify(v); return j === undefined ? 'null' : j; }
    if (typeof v.toJSON === 'function') return serialize(v.toJSON(), depth + 1);
    if (Array.isArray(v)) return '[' + v.map((x) => serialize(x, depth + 1)).join(', ') + ']';
    const parts = [];
    for (const k of Object.keys(v)) {
      if (v[k] === undefined || typeof v[k] === 'function') continue;
      parts.push(JSON.stringify(k) + ' : ' + serialize(v[k], depth + 1));
    }
    return '{' + parts.join(', ') + '}';
  }
  function isObject(v) { return v !== null && typeof v === 'object' && !Array.isArray(v); }
  function deepMerge(a, b) {
    if (!isObject(a) || !isObject(b)) return b;
    const out = {};
    for (const k of Object.keys(a)) Object.defineProperty(out, k, { value: a[k], enumerable: true, writable: true, configurable: true });
    for (const k of Object.keys(b)) {
      Object.defineProperty(out, k, { value: k in out ? deepMerge(out[k], b[k]) : b[k], enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  function concat(a, b) { a = toBytes(a); b = toBytes(b); const o = new Uint8Array(a.length + b.length); o.set(a, 0); o.set(b, a.length); return o; }
  function memoryReader(buf) {
    let data = toBytes(buf), pos = 0;
    return {
      read(n) { const k = n === undefined ? data.length - pos : Math.max(0, Math.min(Number(n) | 0, data.length - pos)); const o = data.slice(pos, pos + k); pos += k; return o; },
      readAll() { const o = data.slice(pos); pos = data.length; return o; },
      available() { return data.length - pos; },
    };
  }
  // A JSON Schema subset for doc(): type, enum, const, required, properties, additionalProperties (false or a
  // schema), items, min/maxLength, minimum/maximum, min/maxItems, pattern. Returns the first failure or null.
  function typeOf(v) {
    if (v === null) return 'null';
    if (Array.isArray(v)) return 'array';
    if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
    return typeof v;
  }
  function typeMatches(want, got) { return want === got || (want === 'number' && got === 'integer'); }
  function validate(schema, v, path, depth) {
    if (schema === true || schema === undefined || schema === null || typeof schema !== 'object') return null;
    if (depth > 64) return path + ': schema nested too deeply';
    const t = typeOf(v);
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (!types.some((w) => typeMatches(w, t))) return path + ': expected ' + types.join(' or ') + ', found ' + t;
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) return path + ': not one of the allowed values';
    if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(v)) return path + ': not the expected constant';
    if (t === 'string') {
      if (schema.minLength !== undefined && v.length < schema.minLength) return path + ': shorter than ' + schema.minLength;
      if (schema.maxLength !== undefined && v.length > schema.maxLength) return path + ': longer than ' + schema.maxLength;
      if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(v)) return path + ': does not match the pattern';
    }
    if (t === 'number' || t === 'integer') {
      if (schema.minimum !== undefined && v < schema.minimum) return path + ': below ' + schema.minimum;
      if (schema.maximum !== undefined && v > schema.maximum) return path + ': above ' + schema.maximum;
    }
    if (t === 'array') {
      if (schema.minItems !== undefined && v.length < schema.minItems) return path + ': fewer than ' + schema.minItems + ' items';
      if (schema.maxItems !== undefined && v.length > schema.maxItems) return path + ': more than ' + schema.maxItems + ' items';
      for (let i = 0; schema.items && i < v.length; i++) { const e = validate(schema.items, v[i], path + '/' + i, depth + 1); if (e) return e; }
    }
    if (t === 'object') {
      for (const k of Array.isArray(schema.required) ? schema.required : []) if (!Object.prototype.hasOwnProperty.call(v, k)) return path + ': missing ' + k;
      const props = schema.properties || {};
      for (const k of Object.keys(v)) {
        const sub = Object.prototype.hasOwnProperty.call(props, k) ? props[k] : schema.additionalProperties;
        if (sub === false) return path + ': unexpected property ' + k;
        const e = validate(sub, v[k], path + '/' + k, depth + 1); if (e) return e;
      }
    }
    return null;
  }
${PRELUDE_EXTRAS}
  return { bytes, crypto, makeDoc, validate, unsupported, utf8Encode, utf8Decode, toBytes, toHex, fromHex, toBase64, fromBase64, crc32, serialize, deepMerge, concat, memoryReader };
})
`;
