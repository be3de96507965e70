// The few `Buffer` calls of this library, for its browser build (ADR 0146; tsup.browser.config.ts injects this
// module where the code names `Buffer`, so the bundle has no global). Only the encodings they use: hex, Base64,
// base64url, and UTF-8 byte length. The strict checks stay in the library: its decoders test every input
// against an exact pattern before decoding, and re-encode Base64 to refuse non-canonical forms, so these decoders
// only ever see well-formed text; like Node's, they ignore a final group's trailing bits.
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const HEX = '0123456789abcdef';

function encodeB64(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + (pad ? '==' : '');
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + (pad ? '=' : '');
  }
  return out;
}

function decodeB64(text: string): Uint8Array {
  const clean = text.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 6) / 8));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (const ch of clean) {
    let v = B64.indexOf(ch);
    if (v < 0) v = B64URL.indexOf(ch);
    if (v < 0) throw new TypeError('Buffer.from: not Base64');
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

function decodeHex(text: string): Uint8Array {
  const out = new Uint8Array(text.length >> 1);
  for (let i = 0; i < out.length; i++) {
    const v = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16);
    if (Number.isNaN(v)) throw new TypeError('Buffer.from: not hex');
    out[i] = v;
  }
  return out;
}

type Encoding = 'hex' | 'base64' | 'base64url' | 'utf8' | 'utf-8';

/** A byte view whose toString speaks the encodings above, as a Node Buffer's does. */
class BufferView extends Uint8Array {
  override toString(encoding: Encoding = 'utf8'): string {
    if (encoding === 'hex') {
      let out = '';
      for (const x of this) out += HEX[x >> 4]! + HEX[x & 15]!;
      return out;
    }
    if (encoding === 'base64') return encodeB64(this, B64, true);
    if (encoding === 'base64url') return encodeB64(this, B64URL, false);
    return new TextDecoder('utf-8', { fatal: true }).decode(this);
  }
}

function view(bytes: Uint8Array): BufferView {
  return new BufferView(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
}

export const Buffer = {
  /** A view of (buffer, offset, length), or the bytes of a string in an encoding. */
  from(value: ArrayBuffer | string, a?: number | Encoding, b?: number): BufferView {
    if (typeof value !== 'string') return new BufferView(value, a as number | undefined, b);
    if (a === 'hex') return view(decodeHex(value));
    if (a === 'base64' || a === 'base64url') return view(decodeB64(value));
    return view(new TextEncoder().encode(value));
  },
  alloc(n: number): BufferView {
    return new BufferView(n);
  },
  byteLength(text: string, encoding: Encoding = 'utf8'): number {
    if (encoding !== 'utf8' && encoding !== 'utf-8') throw new TypeError(`Buffer.byteLength: ${encoding}`);
    return new TextEncoder().encode(text).length;
  },
};
