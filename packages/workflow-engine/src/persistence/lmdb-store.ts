import { fstatSync, readSync } from 'node:fs';
import type * as Lmdb from 'lmdb';
import type { RootDatabase } from 'lmdb';
import { EngineError } from '../errors.js';
import { LmdbEntries, limit, type RunWrites, type Stats } from './lmdb-entries.js';
import {
  KIND,
  META_KEY,
  openSealed,
  sealBytes,
  STATS_KEY,
  STORE_FORMAT,
  STORE_VERSION,
  StoreCodec,
} from './store-codec.js';
import { joinedPairs } from './joined.js';
import { guardLmdbCommitFailures } from './lmdb-guard.js';
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
  guardLmdbCommitFailures();
  return (lmdbModule ??= import('lmdb'));
}

/** The LMDB meta page magic (0xBEEFC0DE, little-endian) at offset 24 of page 0 (lmdb-js 3.x data format). */
const LMDB_MAGIC = [0xde, 0xc0, 0xef, 0xbe];
const MAGIC_OFFSET = 24;
/** Queue sequence numbers start here, so `returnItem` can go below the first pushed item. */
const QUEUE_BASE = 2 ** 40;
/** Queues whose state a store keeps before it lets go of the empty ones. */
const MAX_QUEUE_STATES = 1024;

/** A queue's visible items: the sequence numbers `seqs[head…]`, in order. */
interface QueueState {
  name: string;
  seqs: number[];
  head: number;
}

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

/** What the system said when a file or directory could not be opened or created, e.g. `EROFS (read-only file system)`. */
const SYSTEM_CAUSES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENAMETOOLONG: 'a name in the path is too long',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'a component of the path is not a directory',
  EISDIR: 'the path is a directory',
  ENOENT: 'a directory on the way does not exist',
  EMFILE: 'too many open files in the process',
  ENFILE: 'too many open files in the system',
  EIO: 'input/output error',
  ENOMEM: 'out of memory',
  ELOOP: 'too many symbolic links',
};

/** `CODE (meaning)` for a system error of a known kind (nothing is corrupt then), else undefined. */
function systemCause(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !Object.hasOwn(SYSTEM_CAUSES, code)) return undefined;
  return `${code} (${SYSTEM_CAUSES[code]})`;
}

/** A path for a message: JSON-quoted, cut in the middle past 300 characters. */
function shown(path: string): string {
  return JSON.stringify(path.length <= 300 ? path : `${path.slice(0, 150)}…${path.slice(-150)}`);
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
  /** The state of each queue used lately, by the id of its key prefix. */
  private readonly queues = new Map<string, QueueState>();
  /** The next sequence number of a pushed item, and of a returned one (counting down): never reused. */
  private upSeq = QUEUE_BASE;
  private downSeq = QUEUE_BASE - 1;

  private constructor(
    db: RootDatabase<Buffer, Buffer>,
    codec: StoreCodec,
    limits: PersistenceLimits,
    readonly path: string,
    readonly hexKey: string | undefined,
    private readonly files: StoreFiles,
    /** Seals values written in an authentication context (ADR 0130); undefined: such writes are refused. */
    private readonly authBox: Uint8Array | undefined,
  ) {
    super(db, codec, limits);
  }

  /**
   * Opens or creates the store at `path` (already checked by `resolveStore` to lie under `realRoot`), through
   * `StoreFiles`: no directory or file swapped in since the check can redirect the open (ADR 0067).
   * @throws EngineError `ENGINE_PERSISTENCE_CORRUPT`, `ENGINE_PERSISTENCE_KEY`, `ENGINE_PERSISTENCE_INVALID`,
   *   `ENGINE_PERSISTENCE_FAILED`, `ENGINE_PERSISTENCE_UNAVAILABLE` (the system refused: the path and errno named).
   */
  static open(
    lmdb: LmdbModule,
    realRoot: string,
    path: string,
    spec: PersistenceSpec,
    limits: PersistenceLimits,
    where: string,
    authKey?: Uint8Array,
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
      const errno = systemCause(cause);
      if (errno !== undefined)
        throw new EngineError(
          'ENGINE_PERSISTENCE_UNAVAILABLE',
          `${where}: the persistence file ${shown(path)} cannot be opened or created: ${errno}`,
          { cause },
        );
      throw new EngineError('ENGINE_PERSISTENCE_CORRUPT', `${where}: the persistence file cannot be opened`, {
        cause,
      });
    }
    const store = new LmdbStore(db, codec, limits, path, spec.hexSymmetricKey, files, codec.authKey(authKey));
    try {
      store.init(where);
    } catch (err) {
      closeAfter(db, files);
      throw err;
    }
    return store;
  }

  /** {@link PersistentStore.begin}: a step run's view, whose writes commit with its own settle only. */
  begin(): PersistentStore {
    return new StoreRun(this, this.newRun());
  }

  /** For {@link StoreRun}: one call of the run, with the run as the writer. */
  as<T>(run: RunWrites, fn: () => T): T {
    return this.within(run, fn);
  }

  /** For {@link StoreRun}: settles the run. */
  end(run: RunWrites, flush: boolean): Promise<void> {
    return this.settleRun(run, flush);
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
    if (meta.format !== STORE_FORMAT || (meta.version !== STORE_VERSION && meta.version !== 1))
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
    this.setCounts(stats);
    if (meta.version === 1) this.migrateFrom1(meta, where);
  }

  /**
   * A version 1 store kept a header record `{h, t}` per queue; version 2 has none (ADR 0126): the items are the
   * queue. The headers go and the counts are made anew, in one transaction, before anything else reads the store.
   */
  private migrateFrom1(meta: Meta, where: string): void {
    const stats: Stats = { entries: 0, bytes: 0 };
    try {
      this.db.transactionSync(() => {
        for (const { key, value } of this.db.getRange({ start: Buffer.from([1]) }) as Iterable<{
          key: Buffer;
          value: Buffer;
        }>) {
          if (key[0] === KIND.queueHeader) {
            this.db.removeSync(key);
            continue;
          }
          stats.entries++;
          stats.bytes += key.length + value.length;
        }
        this.db.putSync(Buffer.from(STATS_KEY), Buffer.from(JSON.stringify(stats)));
        this.db.putSync(
          Buffer.from(META_KEY),
          Buffer.from(JSON.stringify({ ...meta, version: STORE_VERSION })),
        );
      });
    } catch (cause) {
      throw new EngineError('ENGINE_PERSISTENCE_FAILED', `${where}: the store could not be upgraded`, {
        cause,
      });
    }
    this.setCounts(stats);
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

  /**
   * {@link PersistentStore.getAuthItem}: a value written in an authentication context, or null — also when it no
   * longer opens (the host's key changed: a cache entry read as absent, ADR 0130).
   */
  getAuthItem(key: string): string | null {
    if (this.authBox === undefined) return null;
    const k = this.codec.key(KIND.authItem, this.name(key, 'key'));
    const stored = this.read(k);
    if (stored === undefined) return null;
    const plain = openSealed(this.authBox, k, stored);
    return plain === undefined ? null : utf8.decode(plain);
  }

  /**
   * {@link PersistentStore.setAuthItem}: stores `value` sealed (ADR 0130) where only {@link getAuthItem} reads it.
   * @throws EngineError `ENGINE_NOT_PERMITTED` when the store has no key to seal it with.
   */
  setAuthItem(key: string, value: string | null): void {
    if (this.authBox === undefined)
      throw new EngineError(
        'ENGINE_NOT_PERMITTED',
        "setPersistedItem in an authentication context needs a key to seal the value: the step's persistence.hexSymmetricKey, or the agent's AGENT_STRING_SECRETKEYS",
      );
    const box = this.authBox;
    this.mutate(() => {
      const k = this.codec.key(KIND.authItem, this.name(key, 'key'));
      this.putEntry(k, value === null ? null : sealBytes(box, k, this.valueBytes(value, 'value')));
    });
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

  // ---- queues (ADR 0126): one entry per item, no shared header, so each run's push and take commit alone ----

  /**
   * The visible items of `queue` in order, loaded from LMDB the first time the queue is used (keys only; items whose
   * removal is pending are left out) and then kept in step with every push, take and return.
   */
  private queueOf(queue: string): QueueState {
    const name = this.name(queue, 'queue name');
    const first = this.codec.queueItemKey(name, 0);
    const prefix = first.subarray(0, first.length - 8);
    const id = this.idOf(prefix);
    let q = this.queues.get(id);
    if (q !== undefined) return q;
    if (this.queues.size >= MAX_QUEUE_STATES) this.forgetEmptyQueues();
    const seqs: number[] = [];
    this.freshSnapshot();
    for (const key of this.db.getKeys({
      start: Buffer.from(first),
      end: Buffer.concat([prefix, Buffer.alloc(8, 0xff)]),
    }) as Iterable<Buffer>) {
      if (key.length !== first.length || this.removedPending(key.toString('latin1'))) continue;
      seqs.push(Number(key.readBigUInt64BE(key.length - 8)));
    }
    q = { name, seqs, head: 0 };
    if (seqs.length > 0) {
      this.upSeq = Math.max(this.upSeq, seqs[seqs.length - 1]! + 1);
      this.downSeq = Math.min(this.downSeq, seqs[0]! - 1);
    }
    this.queues.set(id, q);
    return q;
  }

  /** Lets go of the states of empty queues (a script may name many); a queue with items keeps its state. */
  private forgetEmptyQueues(): void {
    for (const [id, q] of this.queues) if (q.seqs.length === q.head) this.queues.delete(id);
  }

  protected override forgetOverlay(): void {
    this.queues.clear();
  }

  queueSize(queue: string): number {
    const q = this.queueOf(queue);
    return q.seqs.length - q.head;
  }

  push(queue: string, item: string): void {
    this.mutate(() => this.pushItem(queue, item));
  }

  private pushItem(queue: string, item: string): void {
    const q = this.queueOf(queue);
    const bytes = this.valueBytes(item, 'queue item');
    if (q.seqs.length - q.head >= this.limits.maxQueueItems)
      throw limit(`the queue holds its limit of ${this.limits.maxQueueItems} items`);
    const seq = this.upSeq;
    this.setEntry(this.codec.queueItemKey(q.name, seq), bytes);
    this.upSeq++;
    q.seqs.push(seq);
  }

  returnItem(queue: string, item: string): void {
    this.mutate(() => this.returnOne(queue, item));
  }

  private returnOne(queue: string, item: string): void {
    const q = this.queueOf(queue);
    const bytes = this.valueBytes(item, 'queue item');
    if (q.seqs.length - q.head >= this.limits.maxQueueItems)
      throw limit(`the queue holds its limit of ${this.limits.maxQueueItems} items`);
    if (this.downSeq <= 0) throw limit('the queue cannot take more returned items');
    const seq = this.downSeq;
    this.setEntry(this.codec.queueItemKey(q.name, seq), bytes);
    this.downSeq--;
    if (q.head > 0) q.seqs[--q.head] = seq;
    else q.seqs.unshift(seq);
  }

  take(queue: string, n: number): string[] {
    return this.mutate(() => this.takeItems(queue, n));
  }

  private takeItems(queue: string, n: number): string[] {
    const q = this.queueOf(queue);
    const out: string[] = [];
    let bytes = 0;
    while (out.length < n && q.head < q.seqs.length) {
      const key = this.codec.queueItemKey(q.name, q.seqs[q.head]!);
      const v = this.getValue(key);
      if (v === undefined) throw new EngineError('ENGINE_PERSISTENCE_CORRUPT', 'a queue item is missing');
      if (out.length > 0 && bytes + v.length > this.limits.maxTakeBytes) break;
      this.setEntry(key, null);
      bytes += v.length;
      out.push(utf8.decode(v));
      q.head++;
    }
    if (q.head > 1024 && q.head * 2 > q.seqs.length) {
      q.seqs = q.seqs.slice(q.head);
      q.head = 0;
    }
    return out;
  }
}

/**
 * One step run's view of a store (ADR 0126): reads go to the store (every run's pending writes included), writes are
 * the run's own, held until {@link settle} commits them in one transaction.
 */
class StoreRun implements PersistentStore {
  constructor(
    private readonly store: LmdbStore,
    private readonly run: RunWrites,
  ) {}

  get itemLimits(): { maxKeyBytes: number; maxValueBytes: number } {
    return this.store.itemLimits;
  }

  getItem(key: string): string | null {
    return this.store.getItem(key);
  }
  getAuthItem(key: string): string | null {
    return this.store.getAuthItem(key);
  }
  setAuthItem(key: string, value: string | null): void {
    this.store.as(this.run, () => this.store.setAuthItem(key, value));
  }
  setItem(key: string, value: string | null): void {
    this.store.as(this.run, () => this.store.setItem(key, value));
  }
  setItems(pairs: readonly (readonly [string, string | null])[]): void {
    this.store.as(this.run, () => this.store.setItems(pairs));
  }
  setJoined(lengths: Int32Array, text: string): void {
    this.store.as(this.run, () => this.store.setJoined(lengths, text));
  }
  admitsJoined(lengths: Int32Array, text: string): boolean {
    return this.store.as(this.run, () => this.store.admitsJoined(lengths, text));
  }
  getTimestamp(key: string): number | null {
    return this.store.getTimestamp(key);
  }
  firstTimestamp(key: string): number | null {
    return this.store.firstTimestamp(key);
  }
  setTimestamp(key: string, ts: number): void {
    this.store.as(this.run, () => this.store.setTimestamp(key, ts));
  }
  setTimestampIfLatest(key: string, ts: number): boolean {
    return this.store.as(this.run, () => this.store.setTimestampIfLatest(key, ts));
  }
  delta(key: string, value: number): number {
    return this.store.as(this.run, () => this.store.delta(key, value));
  }
  push(queue: string, item: string): void {
    this.store.as(this.run, () => this.store.push(queue, item));
  }
  take(queue: string, n: number): string[] {
    return this.store.as(this.run, () => this.store.take(queue, n));
  }
  returnItem(queue: string, item: string): void {
    this.store.as(this.run, () => this.store.returnItem(queue, item));
  }
  queueSize(queue: string): number {
    return this.store.queueSize(queue);
  }
  /** Commits the run's writes, and flushes them when `flush`; the run takes no writes after. */
  settle(flush: boolean): Promise<void> {
    return this.store.end(this.run, flush);
  }
}
