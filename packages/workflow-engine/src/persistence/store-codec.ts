import { createHmac } from 'node:crypto';
import {
  BOX_NONCE_BYTES,
  decodeHex,
  encodeUtf8,
  equalBytes,
  hkdfSha256,
  isCryptoError,
  randomBytes,
  secretboxEasy,
  secretboxOpenEasy,
} from '@org/envelope-crypto';
import { EngineError } from '../errors.js';

/**
 * Key layout (ADR 0052). Byte 0 is the record kind; names are UTF-8 (or a 32-byte HMAC when obfuscated).
 *   00 00                          meta (format, version, key check value) — plain JSON
 *   00 01                          stats (entries, bytes) — plain JSON
 *   01 name                        setPersistedItem value
 *   02 name                        timestamp record {first, last}
 *   03 name                        delta: previous value
 *   04 name                        queue header {h, t} (version 1 only; removed when a version 1 store is opened)
 *   05 len16 name seq64            queue item (seq big-endian, so LMDB orders items; the items are the queue)
 *   06 name                        setPersistedItem value written in an authentication context (always sealed,
 *                                  ADR 0130: with the store key, or a key the host gives for this purpose)
 */
export const KIND = { item: 1, timestamp: 2, delta: 3, queueHeader: 4, queueItem: 5, authItem: 6 } as const;
export const META_KEY = new Uint8Array([0, 0]);
export const STATS_KEY = new Uint8Array([0, 1]);

/** Identifies our stores; a file without it (or with another value) is refused as foreign. */
export const STORE_FORMAT = 'org.workflow-engine.persistence';
/** 2: queues have no header record (ADR 0126); a version 1 store is upgraded when opened. */
export const STORE_VERSION = 2;

const KCV_TEXT = encodeUtf8('org.workflow-engine.persistence key check v1');
const PLAIN = 0;
const PLAIN_TAG = '\u0000';
const SEALED = 1;

/** Turns names into storage keys and values into stored bytes, sealing them when a key is set. */
export class StoreCodec {
  private readonly boxKey: Uint8Array | undefined;
  private readonly nameKey: Uint8Array | undefined;

  /** @throws EngineError `ENGINE_PERSISTENCE_INVALID` for a malformed key or `obfuscate` without a key. */
  constructor(hexKey: string | undefined, obfuscate: boolean, where: string) {
    if (obfuscate && hexKey === undefined)
      throw new EngineError('ENGINE_PERSISTENCE_INVALID', `${where}: obfuscate needs hexSymmetricKey`);
    if (hexKey === undefined) return;
    let master: Uint8Array;
    try {
      master = decodeHex(hexKey, 32, 'persistence.hexSymmetricKey');
    } catch (err) {
      if (!isCryptoError(err)) throw err;
      throw new EngineError('ENGINE_PERSISTENCE_INVALID', `${where}: ${err.message}`);
    }
    // Separate subkeys: one for secretbox, one for the name HMAC.
    this.boxKey = hkdfSha256(master, new Uint8Array(0), encodeUtf8('persistence values'), 32);
    if (obfuscate) this.nameKey = hkdfSha256(master, new Uint8Array(0), encodeUtf8('persistence names'), 32);
    master.fill(0);
  }

  get encrypted(): boolean {
    return this.boxKey !== undefined;
  }

  get obfuscated(): boolean {
    return this.nameKey !== undefined;
  }

  /** Neither sealed nor obfuscated: a name's key is its kind byte and UTF-8, a value is `00` and its UTF-8. */
  get plain(): boolean {
    return this.boxKey === undefined && this.nameKey === undefined;
  }

  private name(name: string): Uint8Array {
    const bytes = Buffer.from(name, 'utf8');
    if (!this.nameKey) return bytes;
    return new Uint8Array(createHmac('sha256', this.nameKey).update(bytes).digest());
  }

  key(kind: number, name: string): Uint8Array {
    if (this.nameKey) {
      const n = this.name(name);
      const out = Buffer.allocUnsafe(1 + n.length);
      out[0] = kind;
      out.set(n, 1);
      return out;
    }
    return Buffer.from(String.fromCharCode(kind) + name, 'utf8'); // kind < 0x80: one byte
  }

  queueItemKey(queue: string, seq: number): Uint8Array {
    const n = this.name(queue);
    const out = new Uint8Array(3 + n.length + 8);
    const view = new DataView(out.buffer);
    out[0] = KIND.queueItem;
    view.setUint16(1, n.length);
    out.set(n, 3);
    view.setBigUint64(3 + n.length, BigInt(seq));
    return out;
  }

  /** `00 value` or `01 nonce secretbox(len16 storageKey value)`: the key inside binds a value to its slot. */
  seal(storageKey: Uint8Array, value: Uint8Array): Uint8Array {
    if (!this.boxKey) return prefixed(PLAIN, value);
    return sealBytes(this.boxKey, storageKey, value);
  }

  /**
   * {@link seal} of a string's UTF-8 bytes, or undefined when they are more than `max` bytes. Without a key this
   * is one allocation and one encoding (the hot path of `setPersistedItem`).
   */
  sealText(storageKey: Uint8Array, text: string, max: number): Uint8Array | undefined {
    if (this.boxKey) {
      const bytes = Buffer.from(text, 'utf8');
      return bytes.length > max ? undefined : sealBytes(this.boxKey, storageKey, bytes);
    }
    if (text.length > max) return undefined; // at least one byte per UTF-16 unit
    const out = Buffer.from(PLAIN_TAG + text, 'utf8');
    return out.length - 1 > max ? undefined : out;
  }

  /** @throws EngineError `ENGINE_PERSISTENCE_CORRUPT` for a value that is not ours or was moved or altered. */
  open(storageKey: Uint8Array, stored: Uint8Array): Uint8Array {
    if (!this.boxKey) {
      if (stored[0] !== PLAIN) throw corrupt();
      return stored.subarray(1);
    }
    const plain = openSealed(this.boxKey, storageKey, stored);
    if (plain === undefined) throw corrupt();
    return plain;
  }

  /**
   * The key that seals values written in an authentication context (ADR 0130): the store's own value key when it has
   * one, else a key derived from `hostKey` (the host's key for this purpose), else undefined (such writes refused).
   */
  authKey(hostKey: Uint8Array | undefined): Uint8Array | undefined {
    if (this.boxKey) return this.boxKey;
    if (!hostKey) return undefined;
    return hkdfSha256(hostKey, new Uint8Array(0), encodeUtf8('persistence authentication values'), 32);
  }

  /** Key check value written at creation: a secretbox of a fixed text (ADR 0052). */
  keyCheck(): string | undefined {
    return this.boxKey ? Buffer.from(this.seal(META_KEY, KCV_TEXT)).toString('base64') : undefined;
  }

  /** True when `kcv` opens under this key to the fixed text. */
  checkKey(kcv: string): boolean {
    try {
      return equalBytes(this.open(META_KEY, new Uint8Array(Buffer.from(kcv, 'base64'))), KCV_TEXT);
    } catch {
      return false;
    }
  }
}

/**
 * The value sealed by {@link sealBytes} under `boxKey` for `storageKey`, or undefined when it does not open (another
 * key, another slot, altered).
 */
export function openSealed(
  boxKey: Uint8Array,
  storageKey: Uint8Array,
  stored: Uint8Array,
): Uint8Array | undefined {
  if (stored[0] !== SEALED || stored.length < 1 + BOX_NONCE_BYTES) return undefined;
  let plain: Uint8Array;
  try {
    plain = secretboxOpenEasy(
      stored.subarray(1 + BOX_NONCE_BYTES),
      stored.subarray(1, 1 + BOX_NONCE_BYTES),
      boxKey,
    );
  } catch {
    return undefined;
  }
  const len = plain.length >= 2 ? new DataView(plain.buffer, plain.byteOffset).getUint16(0) : -1;
  if (len !== storageKey.length || !equalBytes(plain.subarray(2, 2 + len), storageKey)) return undefined;
  return plain.subarray(2 + len);
}

/** `01 nonce secretbox(len16 storageKey value)` under `boxKey`, with a fresh nonce. */
export function sealBytes(boxKey: Uint8Array, storageKey: Uint8Array, value: Uint8Array): Uint8Array {
  const plain = new Uint8Array(2 + storageKey.length + value.length);
  new DataView(plain.buffer).setUint16(0, storageKey.length);
  plain.set(storageKey, 2);
  plain.set(value, 2 + storageKey.length);
  const nonce = randomBytes(BOX_NONCE_BYTES);
  const box = secretboxEasy(plain, nonce, boxKey);
  const out = new Uint8Array(1 + nonce.length + box.length);
  out[0] = SEALED;
  out.set(nonce, 1);
  out.set(box, 1 + nonce.length);
  return out;
}

function prefixed(tag: number, value: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(1 + value.length);
  out[0] = tag;
  out.set(value, 1);
  return out;
}

function corrupt(): EngineError {
  return new EngineError('ENGINE_PERSISTENCE_CORRUPT', 'a stored value is not readable with this store key');
}
