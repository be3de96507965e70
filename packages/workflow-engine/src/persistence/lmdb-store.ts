import { fstatSync, readSync } from 'node:fs';
import type * as Lmdb from 'lmdb';
import type { RootDatabase } from 'lmdb';
import { EngineError } from '../errors.js';
import { LmdbEntries, limit, type Stats } from './lmdb-entries.js';
import { KIND, META_KEY, STATS_KEY, STORE_FORMAT, STORE_VERSION, StoreCodec } from './store-codec.js';
import { joinedPairs } from './joined.js';
import { StoreFiles } from './store-files.js';
import type { PersistenceLimits, PersistenceSpec, PersistentStore } from './types.js';

/** The `lmdb` package's exports. */
export type LmdbModule = typeof Lmdb;

let lmdbModule: Promise<LmdbModule> | undefined;

/**
 * Loads `lmdb` on first use, not when the engine loads: its native library and buffers cost ≈ 10 MiB of resident
 * memory, which a deployment without persistence does not need.
 */
export function loadLmdb(): Promise<LmdbModule> {
  return (lmdbModule ??= import('lmdb'));
}

/** The LMDB meta page magic (0xBEEFC0DE, little-endian) at offset 24 of page 0 (lmdb-js 3.x data format). */
const LMDB_MAGIC = [0xde, 0xc0, 0xef, 0xbe];
const MAGIC_OFFSET = 24;
/** Queue sequence numbers start here, so `returnItem` can go below the first pushed item. */
const QUEUE_BASE = 2 ** 40;

const utf8 = new TextDecoder('utf-8');
/** The first byte of an item's storage key and of a plain stored value (store-codec.ts), as latin1 text. */
const KEY_TAG = String.fromCharCode(KIND.item),
  VALUE_TAG = '\u0000';

/**
 * A joined batch (joined.ts, `joinedLengths`) of an ASCII text laid out as a plain store stores it: each pair's storage
 * key and stored value (`01 key 00 value`, or `01 key` for a removal), in call order, encoded in one `Buffer`
 * (`all`). `parts` are the pieces joined, three per pair: the storage key as latin1 text (its id), then the
 * value's tag and text (both '' for a removal). Exported for the benchmarks, which lay batches out the same way.
 */
export function plainLayout(lengths: Int32Array, text: string): { parts: string[]; all: Buffer } {
  const n = lengths.length >> 1;
  const parts: string[] = new Array<string>(3 * n);
  let at = 0;
  for (let i = 0; i < n; i++) parts[3 * i] = KEY_TAG + text.slice(at, (at += lengths[2 * i]!));
  for (let i = 0; i < n; i++) {
    const len = lengths[2 * i + 1]!;
    parts[3 * i + 1] = len < 0 ? '' : VALUE_TAG;
    parts[3 * i + 2] = len < 0 ? '' : text.slice(at, (at += len));
  }
  return { parts, all: Buffer.from(parts.join(''), 'latin1') };
}

function corrupt(where: string, why: string): EngineError {
  return new EngineError('ENGINE_PERSISTENCE_CORRUPT', `${where}: ${why}; the file was left untouched`);
}

/**
 * S128: a file that exists must start with an LMDB meta page before LMDB is allowed to map it; random bytes,
 * an empty file or another program's file are refused without being written (read through the fd opened by
 * `StoreFiles`, not by path).
 */
function checkExistingFile(fd: number, where: string): void {
  const head = Buffer.alloc(MAGIC_OFFSET + 4);
  if (fstatSync(fd).size < head.length || readSync(fd, head, 0, head.length, 0) < head.length)
    throw corrupt(where, 'the persistence file is not a store (too short)');
  if (!LMDB_MAGIC.every((b, i) => head[MAGIC_OFFSET + i] === b))
    throw corrupt(where, 'the persistence file is not a store (no LMDB header)');
}

/** Closes a half-opened store: the environment first, then the fds (LMDB's lock-file locks need them open). */
function closeAfter(db: RootDatabase<Buffer, Buffer> | undefined, files: StoreFiles | undefined): void {
  if (!db) return files?.close();
  void db.close().then(
    () => files?.close(),
    () => files?.close(),
  );
}

interface Meta {
  format: string;
  version: number;
  encrypted: boolean;
  obfuscated: boolean;
  kcv?: string;
}

function parseJson<T>(bytes: Uint8Array | undefined, where: string, what: string): T {
  try {
    return JSON.parse(utf8.decode(bytes)) as T;
  } catch {
    throw corrupt(where, `unreadable ${what} record`);
  }
}

/** One LMDB environment = one persistence file (ADR 0052). Writes are visible at once, durable at `settle`. */
export class LmdbStore extends LmdbEntries implements PersistentStore {
  private constructor(
    db: RootDatabase<Buffer, Buffer>,
    codec: StoreCodec,
    limits: PersistenceLimits,
    readonly path: string,
    readonly hexKey: string | undefined,
    private readonly files: StoreFiles,
  ) {
    super(db, codec, limits);
  }

  /**
   * Opens or creates the store at `path` (already checked by `resolveStore` to lie under `realRoot`), through
   * `StoreFiles`: no directory or file swapped in since the check can redirect the open (ADR 0067).
   * @throws EngineError `ENGINE_PERSISTENCE_CORRUPT`, `ENGINE_PERSISTENCE_KEY`, `ENGINE_PERSISTENCE_INVALID`,
   *   `ENGINE_PERSISTENCE_FAILED`.
   */
  static open(
    lmdb: LmdbModule,
    realRoot: string,
    path: string,
    spec: PersistenceSpec,
    limits: PersistenceLimits,
    where: string,
  ): LmdbStore {
    const codec = new StoreCodec(spec.hexSymmetricKey, spec.obfuscate, where);
    let files: StoreFiles | undefined;
    let db: RootDatabase<Buffer, Buffer> | undefined;
    try {
      files = StoreFiles.open(realRoot, path, where);
      if (files.existed) checkExistingFile(files.fd, where);
      files = files.openLock(where);
      db = lmdb.open<Buffer, Buffer>({
        path: files.lmdbPath,
        noSubdir: true,
        encoding: 'binary',
        keyEncoding: 'binary',
        compression: false,
        cache: false,
        mapSize: 2 * limits.maxStoreBytes + 64 * 1024 * 1024,
      });
      files.verifyOpenedByLmdb(where);
    } catch (cause) {
      closeAfter(db, files);
      if (cause instanceof EngineError) throw cause;
      throw new EngineError('ENGINE_PERSISTENCE_CORRUPT', `${where}: the persistence file cannot be opened`, {
        cause,
      });
    }
    const store = new LmdbStore(db, codec, limits, path, spec.hexSymmetricKey, files);
    try {
      store.init(where);
    } catch (err) {
      closeAfter(db, files);
      throw err;
    }
    return store;
  }

  /** Waits for every write, closes the environment, then the files. */
  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.files.close();
    }
  }

  private init(where: string): void {
    const raw = this.db.getBinary(Buffer.from(META_KEY));
    if (raw === undefined) return this.create(where);
    const meta = parseJson<Meta>(raw, where, 'meta');
    if (meta.format !== STORE_FORMAT || meta.version !== STORE_VERSION)
      throw corrupt(where, 'the persistence file belongs to another program or version');
    if (meta.encrypted !== this.codec.encrypted)
      throw new EngineError(
        'ENGINE_PERSISTENCE_KEY',
        `${where}: the store was created ${meta.encrypted ? 'with' : 'without'} hexSymmetricKey`,
      );
    if (meta.encrypted && (typeof meta.kcv !== 'string' || !this.codec.checkKey(meta.kcv)))
      throw new EngineError('ENGINE_PERSISTENCE_KEY', `${where}: hexSymmetricKey does not open this store`);
    if (meta.obfuscated !== this.codec.obfuscated)
      throw new EngineError(
        'ENGINE_PERSISTENCE_INVALID',
        `${where}: the store was created with obfuscate ${String(meta.obfuscated)}`,
      );
    const stats = parseJson<Stats>(this.db.getBinary(Buffer.from(STATS_KEY)), where, 'stats');
    if (!Number.isSafeInteger(stats.entries) || !Number.isSafeInteger(stats.bytes))
      throw corrupt(where, 'unreadable stats record');
    this.stats = stats;
  }

  /** A new (or empty) environment gets its meta record; a non-empty one without it is someone else's. */
  private create(where: string): void {
    for (const _ of this.db.getKeys({ limit: 1 }))
      throw corrupt(where, 'the persistence file is an LMDB file of another program');
    const meta: Meta = {
      format: STORE_FORMAT,
      version: STORE_VERSION,
      encrypted: this.codec.encrypted,
      obfuscated: this.codec.obfuscated,
    };
    const kcv = this.codec.keyCheck();
    if (kcv !== undefined) meta.kcv = kcv;
    try {
      this.db.transactionSync(() => {
        this.db.putSync(Buffer.from(META_KEY), Buffer.from(JSON.stringify(meta)));
        this.db.putSync(Buffer.from(STATS_KEY), Buffer.from(JSON.stringify(this.stats)));
      });
    } catch (cause) {
      throw new EngineError('ENGINE_PERSISTENCE_FAILED', `${where}: the store could not be created`, {
        cause,
      });
    }
  }

  // ---- PersistentStore ----

  getItem(key: string): string | null {
    const v = this.getValue(this.codec.key(KIND.item, this.name(key, 'key')));
    return v === undefined ? null : utf8.decode(v);
  }

  setItem(key: string, value: string | null): void {
    this.mutate(() => this.setOne(key, value));
  }

  private setOne(key: string, value: string | null): void {
    const k = this.codec.key(KIND.item, this.name(key, 'key'));
    this.putEntry(k, value === null ? null : this.storedText(k, value, 'value'));
  }

  get itemLimits(): { maxKeyBytes: number; maxValueBytes: number } {
    return { maxKeyBytes: this.limits.maxKeyBytes, maxValueBytes: this.limits.maxValueBytes };
  }

  setItems(pairs: readonly (readonly [string, string | null])[]): void {
    this.mutate(() => {
      for (const [key, value] of pairs) this.setOne(key, value);
    });
  }

  /**
   * {@link PersistentStore.admitsJoined}: true only where {@link setJoined} takes its fast path (a plain store, an
   * ASCII text), every key and value is within its limit, and the store has room even if every pair with a value
   * were a new entry (a storage key and a stored value are each one byte longer than the key and the value).
   */
  admitsJoined(lengths: Int32Array, text: string): boolean {
    if (!this.codec.plain || Buffer.byteLength(text, 'utf8') !== text.length) return false;
    const { maxKeyBytes, maxValueBytes } = this.limits;
    let entries = 0,
      bytes = 0;
    for (let i = 0; i < lengths.length; i += 2) {
      const kl = lengths[i]!,
        vl = lengths[i + 1]!;
      if (kl > maxKeyBytes || vl > maxValueBytes) return false;
      if (vl >= 0) {
        entries++;
        bytes += 2 + kl + vl;
      }
    }
    return this.hasRoom(entries, bytes);
  }

  /**
   * The write buffer's batch (ADR 0121). In a plain store (no key, no obfuscation) and an ASCII text, the storage
   * keys and stored values of all pairs are laid out in one text (`01 key 00 value …`) and encoded in one call;
   * each entry is a view of that buffer. The checks, their order and errors, and the result are those of
   * {@link setItems}; anything else goes through it.
   */
  setJoined(lengths: Int32Array, text: string): void {
    if (!this.codec.plain || Buffer.byteLength(text, 'utf8') !== text.length)
      return this.setItems(joinedPairs(lengths, text));
    const n = lengths.length >> 1;
    const { parts, all } = plainLayout(lengths, text);
    const ab = all.buffer,
      base = all.byteOffset;
    const { maxKeyBytes, maxValueBytes } = this.limits;
    this.mutate(() => {
      for (let i = 0, o = base; i < n; i++) {
        const kl = lengths[2 * i]!,
          vl = lengths[2 * i + 1]!;
        if (kl > maxKeyBytes) throw limit(`key is longer than ${maxKeyBytes} bytes`);
        const key = new Uint8Array(ab, o, 1 + kl);
        o += 1 + kl;
        if (vl > maxValueBytes) throw limit(`value is larger than ${maxValueBytes} bytes`);
        let value: Uint8Array | null = null;
        if (vl >= 0) {
          value = new Uint8Array(ab, o, 1 + vl);
          o += 1 + vl;
        }
        this.putEntry(key, value, parts[3 * i]);
      }
    });
  }

  private tsRecord(key: string): { f: number; l: number } | undefined {
    return this.getJson(this.codec.key(KIND.timestamp, this.name(key, 'timestamp key')));
  }

  getTimestamp(key: string): number | null {
    return this.tsRecord(key)?.l ?? null;
  }

  firstTimestamp(key: string): number | null {
    return this.tsRecord(key)?.f ?? null;
  }

  setTimestamp(key: string, ts: number): void {
    const rec = this.tsRecord(key);
    this.mutate(() => this.setJson(this.codec.key(KIND.timestamp, key), { f: rec?.f ?? ts, l: ts }));
  }

  setTimestampIfLatest(key: string, ts: number): boolean {
    const rec = this.tsRecord(key);
    if (rec !== undefined && !(ts > rec.l)) return false;
    this.mutate(() => this.setJson(this.codec.key(KIND.timestamp, key), { f: rec?.f ?? ts, l: ts }));
    return true;
  }

  delta(key: string, value: number): number {
    const k = this.codec.key(KIND.delta, this.name(key, 'delta key'));
    const prev = this.getJson<number>(k);
    this.mutate(() => this.setJson(k, value));
    // A missing previous value counts as 0: the first delta is the value itself (SPEC.md §7).
    return typeof prev === 'number' ? value - prev : value;
  }

  private header(queue: string): { key: Uint8Array; h: number; t: number } {
    const key = this.codec.key(KIND.queueHeader, this.name(queue, 'queue name'));
    const rec = this.getJson<{ h: number; t: number }>(key);
    return { key, h: rec?.h ?? QUEUE_BASE, t: rec?.t ?? QUEUE_BASE };
  }

  private saveHeader(q: { key: Uint8Array; h: number; t: number }): void {
    if (q.h === q.t) this.setEntry(q.key, null);
    else this.setJson(q.key, { h: q.h, t: q.t });
  }

  queueSize(queue: string): number {
    const q = this.header(queue);
    return q.t - q.h;
  }

  push(queue: string, item: string): void {
    this.mutate(() => this.pushItem(queue, item));
  }

  private pushItem(queue: string, item: string): void {
    const q = this.header(queue);
    const bytes = this.valueBytes(item, 'queue item');
    if (q.t - q.h >= this.limits.maxQueueItems)
      throw limit(`the queue holds its limit of ${this.limits.maxQueueItems} items`);
    this.setEntry(this.codec.queueItemKey(queue, q.t), bytes);
    q.t++;
    this.saveHeader(q);
  }

  returnItem(queue: string, item: string): void {
    this.mutate(() => this.returnOne(queue, item));
  }

  private returnOne(queue: string, item: string): void {
    const q = this.header(queue);
    const bytes = this.valueBytes(item, 'queue item');
    if (q.t - q.h >= this.limits.maxQueueItems)
      throw limit(`the queue holds its limit of ${this.limits.maxQueueItems} items`);
    if (q.h <= 0) throw limit('the queue cannot take more returned items');
    q.h--;
    this.setEntry(this.codec.queueItemKey(queue, q.h), bytes);
    this.saveHeader(q);
  }

  take(queue: string, n: number): string[] {
    return this.mutate(() => this.takeItems(queue, n));
  }

  private takeItems(queue: string, n: number): string[] {
    const q = this.header(queue);
    const out: string[] = [];
    let bytes = 0;
    while (out.length < n && q.h < q.t) {
      const key = this.codec.queueItemKey(queue, q.h);
      const v = this.getValue(key);
      if (v === undefined) throw new EngineError('ENGINE_PERSISTENCE_CORRUPT', 'a queue item is missing');
      if (out.length > 0 && bytes + v.length > this.limits.maxTakeBytes) break;
      bytes += v.length;
      out.push(utf8.decode(v));
      this.setEntry(key, null);
      q.h++;
    }
    if (out.length > 0) this.saveHeader(q);
    return out;
  }
}
