import type { Database, RootDatabase } from 'lmdb';
import { EngineError } from '../errors.js';
import { STATS_KEY, type StoreCodec } from './store-codec.js';
import type { PersistenceLimits } from './types.js';

const utf8 = new TextDecoder('utf-8');
const enc = new TextEncoder();

/** Entry and byte counts of a store (the stats record). */
export interface Stats {
  entries: number;
  bytes: number;
}

/**
 * Most storage keys whose stored size the store remembers (ADR 0066, 0125), besides those with a write not yet
 * committed (always kept): an overwrite or removal of one of them needs no LMDB read for the size accounting. The
 * least recently used go first; a miss costs one LMDB read.
 */
export const SIZE_CACHE_KEYS = 65_536;

/**
 * Writes held before they are handed to LMDB (ADR 0066): at most this many entries or stored bytes; the call
 * that reaches either hands them over at its end. Otherwise they go at {@link LmdbEntries.settle}, in one
 * transaction (one commit and one fsync for a whole step run).
 */
export const HELD_WRITES = { entries: 10_000, bytes: 4 * 1024 * 1024 } as const;

/** Failed hand-overs remembered for {@link LmdbEntries.settle}. */
const MAX_FAILURES = 1024;

/** A Buffer over the same bytes, no copy (for `toString` and lmdb-js's typed reads; its writes take any view). */
function view(u8: Uint8Array): Buffer {
  return Buffer.isBuffer(u8) ? u8 : Buffer.from(u8.buffer, u8.byteOffset, u8.length);
}

export function limit(message: string): EngineError {
  return new EngineError('ENGINE_PERSISTENCE_LIMIT', message);
}

function failed(): EngineError {
  return new EngineError('ENGINE_PERSISTENCE_FAILED', 'an earlier write to the store failed');
}

/** What the store knows of one storage key (ADR 0066, 0125). */
interface Known {
  /**
   * The stored size (-1: absent) as the writes so far leave it, pending ones included (after a failed hand-over,
   * until the recount forgets every entry, it may count a write that was not stored; nothing reads it then).
   */
  size: number;
  /** A write not yet committed (read-your-writes): the stored bytes, null for a removal; undefined when none. */
  pending: Uint8Array | null | undefined;
  /** Its id while it is kept in `pinned` (its generation was let go while its write was pending). */
  pinnedAs: string | undefined;
}

/**
 * Writes waiting to be handed to LMDB, three items each, flat (no array per write): what the store knows of the
 * key, the storage key and the stored bytes (null: remove).
 */
type Held = (Known | Uint8Array | null)[];

/**
 * The entry layer of a store (ADR 0052, 0066): an overlay of writes not yet committed over LMDB, size accounting
 * and limit checks, and waiting for durability. `LmdbStore` builds the context calls on it.
 *
 * - Writes are checked and counted at the call and visible at once (the overlay), but held in memory until
 *   {@link settle} (or a bound, {@link HELD_WRITES}) hands them to LMDB together with the stats record, in one
 *   event turn and so in one LMDB transaction: the counts never drift from the data, and a step run costs one
 *   commit and one fsync however many calls wrote.
 * - The counts live in memory, loaded at open. The stored size of recently read or written keys is remembered
 *   with their pending write in one entry per key ({@link Known}), so the accounting of an overwrite or removal
 *   needs one map lookup and no LMDB read unless the key was not seen lately.
 * - A hand-over LMDB refuses at commit (disk full, I/O error) stops every later write until {@link settle} has
 *   dropped what was held and recounted what is stored: the counts never include writes that were not stored.
 */
export class LmdbEntries {
  /**
   * Recently seen keys by id, in two generations of half {@link SIZE_CACHE_KEYS}: their size, and the write held
   * or handed to LMDB and not yet committed (read-your-writes until the commit lands). A key with a pending write is
   * never let go (see {@link add}).
   */
  private known = new Map<string, Known>();
  private oldKnown = new Map<string, Known>();
  /** Entries of a generation let go while their write was pending, until its commit: each is moved here once. */
  private pinned = new Map<string, Known>();
  /** Writes not yet handed to LMDB, in call order, and their stored bytes. */
  private held: Held = [];
  private heldBytes = 0;
  /** A held write may replace one still pending (a key written twice before its commit): see {@link handOver}. */
  private heldReplaces = false;
  /** The stats record changed since the last hand-over. */
  private statsDirty = false;
  protected stats: Stats = { entries: 0, bytes: 0 };
  protected lastWrite: Promise<unknown> = Promise.resolve();
  /** Calls that wrote, counted ({@link writeMark}); those handed to LMDB; those covered by a settle without `since`. */
  private calls = 0;
  private handedCalls = 0;
  private settledCalls = 0;
  /** True while the current call has written. */
  private callWrote = false;
  /** Set when a hand-over failed: writes are refused until {@link settle} has recounted the store. */
  private broken = false;
  /** Calls `(from, to]` whose writes were lost (a failed hand-over, or held when it failed). */
  private failures: [from: number, to: number][] = [];
  /** Set when pending writes were cleared after a commit: the next LMDB read starts a fresh snapshot. */
  protected staleSnapshot = false;

  protected constructor(
    protected readonly db: RootDatabase<Buffer, Buffer>,
    protected readonly codec: StoreCodec,
    protected readonly limits: PersistenceLimits,
  ) {}

  // ---- raw access: overlay of pending writes over LMDB ----

  /** The map key of a storage key: its bytes as a latin1 string (one character per byte). */
  private idOf(key: Uint8Array): string {
    return view(key).toString('latin1');
  }

  protected read(key: Uint8Array): Uint8Array | undefined {
    const id = this.idOf(key);
    const k = this.lookup(id);
    if (k?.pending !== undefined) return k.pending ?? undefined;
    this.freshSnapshot();
    const v = this.db.getBinary(view(key));
    const size = v === undefined ? -1 : v.length;
    if (k !== undefined) k.size = size;
    else this.add(id, { size, pending: undefined, pinnedAs: undefined });
    return v;
  }

  /**
   * What the store knows of `id`: from the current generation, or the previous one (moved up), or the pinned
   * entries, or undefined.
   */
  private lookup(id: string): Known | undefined {
    const k = this.known.get(id);
    if (k !== undefined) return k;
    const old = this.oldKnown.get(id);
    if (old !== undefined) {
      this.add(id, old);
      return old;
    }
    return this.pinned.size === 0 ? undefined : this.pinned.get(id);
  }

  /** The entry of a key about to be written: known, or its stored size read from LMDB once. */
  private entryOf(id: string, key: Uint8Array): Known {
    const k = this.lookup(id);
    if (k !== undefined) return k;
    this.freshSnapshot();
    const read: Known = {
      size: this.db.getBinaryFast(view(key))?.length ?? -1,
      pending: undefined,
      pinnedAs: undefined,
    };
    this.add(id, read);
    return read;
  }

  /**
   * Adds an entry to the current generation. When that holds half of {@link SIZE_CACHE_KEYS} it becomes the
   * previous one and the previous one is let go, except its entries with a write still pending, which are pinned
   * until that write's commit: the overlay never loses a write before its commit, and no entry is moved twice.
   */
  private add(id: string, k: Known): void {
    if (this.known.size >= SIZE_CACHE_KEYS / 2) {
      const dropped = this.oldKnown;
      this.oldKnown = this.known;
      this.known = new Map();
      for (const [i, d] of dropped)
        if (d.pending !== undefined && !this.oldKnown.has(i)) {
          d.pinnedAs = i;
          this.pinned.set(i, d);
        }
    }
    this.known.set(id, k);
  }

  /** A read after the overlay dropped a committed write must see that commit (no stale read snapshot). */
  protected freshSnapshot(): void {
    if (!this.staleSnapshot) return;
    this.staleSnapshot = false;
    this.db.resetReadTxn();
  }

  /**
   * True when up to `entries` new entries of `bytes` more bytes (storage keys and stored values) cannot breach the
   * store's limits, and the store takes writes (no failed hand-over waiting for {@link settle}).
   */
  protected hasRoom(entries: number, bytes: number): boolean {
    return (
      !this.broken &&
      this.stats.entries + entries <= this.limits.maxEntries &&
      this.stats.bytes + bytes <= this.limits.maxStoreBytes
    );
  }

  /** Writes one entry (sealed here) after the limit checks; see {@link putEntry}. */
  protected setEntry(key: Uint8Array, value: Uint8Array | null): void {
    this.putEntry(key, value === null ? null : this.codec.seal(key, value));
  }

  /**
   * Checks one write of the current call against the limits, counts it and holds it (visible at once);
   * {@link mutate} ends the call. `knownId`: the key's id (its bytes as latin1) when the caller has it.
   */
  protected putEntry(key: Uint8Array, stored: Uint8Array | null, knownId?: string): void {
    if (this.broken) throw failed();
    const id = knownId ?? this.idOf(key);
    const k = this.entryOf(id, key);
    const old = k.size;
    if (old < 0 && stored === null) return;
    const entries = this.stats.entries + (stored ? 1 : 0) - (old >= 0 ? 1 : 0);
    const bytes =
      this.stats.bytes + (stored ? key.length + stored.length : 0) - (old >= 0 ? key.length + old : 0);
    if (entries > this.stats.entries && entries > this.limits.maxEntries)
      throw limit(`the store holds its limit of ${this.limits.maxEntries} entries`);
    if (bytes > this.stats.bytes && bytes > this.limits.maxStoreBytes)
      throw limit(`the store holds its limit of ${this.limits.maxStoreBytes} bytes`);
    if (k.pending !== undefined) this.heldReplaces = true;
    k.size = stored === null ? -1 : stored.length;
    k.pending = stored;
    this.held.push(k, key, stored);
    this.heldBytes += key.length + (stored?.length ?? 0);
    this.stats.entries = entries;
    this.stats.bytes = bytes;
    this.statsDirty = true;
    this.callWrote = true;
  }

  /**
   * Runs one public call: its writes are held together and handed to LMDB together (see {@link handOver}), so
   * each call is atomic. A call that throws keeps the writes it made before the throw (a batch breaching a limit
   * keeps the pairs before the breach).
   */
  protected mutate<T>(fn: () => T): T {
    try {
      return fn();
    } finally {
      if (this.callWrote) {
        this.callWrote = false;
        this.calls++;
        if (this.held.length >= 3 * HELD_WRITES.entries || this.heldBytes >= HELD_WRITES.bytes)
          this.handOver();
      }
    }
  }

  /**
   * Hands every held write and the stats record to LMDB in one event turn, hence one transaction. After the
   * commit the pending writes not replaced since are cleared from their entries (the overlay); after a failed
   * commit too (they were not stored), and the store stops taking writes until {@link settle} has recounted it.
   */
  private handOver(): void {
    if (this.held.length === 0) return;
    const writes = this.held;
    const replaces = this.heldReplaces;
    this.held = [];
    this.heldBytes = 0;
    this.heldReplaces = false;
    const from = this.handedCalls;
    const to = (this.handedCalls = this.calls);
    // lmdb-js gives the writes of one batch one promise; every distinct one is watched (no unhandled rejection).
    const commits: Promise<unknown>[] = [];
    const watch = (q: Promise<unknown>): void => {
      if (q !== commits[commits.length - 1]) commits.push(q);
    };
    try {
      // lmdb-js takes any Uint8Array as a binary key or value (its README, `keyEncoding: 'binary'`): views go as
      // they are. A write replaced by a later one of this hand-over is not written; only when some write found its
      // key pending is that looked up.
      for (let i = 0; i < writes.length; i += 3) {
        const key = writes[i + 1] as Buffer,
          stored = writes[i + 2] as Buffer | null;
        if (replaces && (writes[i] as Known).pending !== stored) continue;
        watch(stored === null ? this.db.remove(key) : this.db.put(key, stored));
      }
      if (this.statsDirty) {
        this.statsDirty = false;
        watch(this.db.put(Buffer.from(STATS_KEY), Buffer.from(JSON.stringify(this.stats))));
      }
    } catch (err) {
      // LMDB refused at the call: what was handed over may or may not be stored; settle() reports and recounts.
      commits.push(Promise.reject(err instanceof Error ? err : new Error(String(err))));
    }
    const p = commits.length === 1 ? commits[0]! : Promise.all(commits);
    const drop = (): void => {
      for (let i = 0; i < writes.length; i += 3) {
        const k = writes[i] as Known;
        if (k.pending !== writes[i + 2]) continue; // written again since: that write's own drop clears it
        k.pending = undefined;
        if (k.pinnedAs !== undefined) {
          this.pinned.delete(k.pinnedAs);
          k.pinnedAs = undefined;
        }
        this.staleSnapshot = true;
      }
    };
    this.lastWrite = p.then(drop, () => {
      drop();
      this.fail(from, to);
    });
  }

  /**
   * After a failed hand-over: writes are refused until {@link settle} has recounted the store, which also forgets
   * every remembered size (some count writes that were not stored).
   */
  private fail(from: number, to: number): void {
    this.broken = true;
    this.failures.push([from, to]);
    if (this.failures.length > MAX_FAILURES) this.failures.shift();
  }

  protected getValue(key: Uint8Array): Uint8Array | undefined {
    const stored = this.read(key);
    return stored === undefined ? undefined : this.codec.open(key, stored);
  }

  protected getJson<T>(key: Uint8Array): T | undefined {
    const v = this.getValue(key);
    if (v === undefined) return undefined;
    try {
      return JSON.parse(utf8.decode(v)) as T;
    } catch {
      throw new EngineError('ENGINE_PERSISTENCE_CORRUPT', 'a stored record is not readable');
    }
  }

  protected setJson(key: Uint8Array, value: unknown): void {
    this.setEntry(key, enc.encode(JSON.stringify(value)));
  }

  protected name(name: string, what: string): string {
    if (
      name.length * 3 > this.limits.maxKeyBytes &&
      Buffer.byteLength(name, 'utf8') > this.limits.maxKeyBytes
    )
      throw limit(`${what} is longer than ${this.limits.maxKeyBytes} bytes`);
    return name;
  }

  /** A value as stored under `key` (sealed when the store has a key), within the value limit. */
  protected storedText(key: Uint8Array, value: string, what: string): Uint8Array {
    const stored = this.codec.sealText(key, value, this.limits.maxValueBytes);
    if (stored === undefined) throw limit(`${what} is larger than ${this.limits.maxValueBytes} bytes`);
    return stored;
  }

  protected valueBytes(value: string, what: string): Uint8Array {
    const bytes = Buffer.from(value, 'utf8');
    if (bytes.length > this.limits.maxValueBytes)
      throw limit(`${what} is larger than ${this.limits.maxValueBytes} bytes`);
    return bytes;
  }

  /** Hands the held writes to LMDB now (one transaction); {@link settle} waits for them. */
  commit(): void {
    if (!this.broken) this.handOver();
  }

  /** The number of calls that wrote so far: pass it to {@link settle} to hear of failures from then on. */
  get writeMark(): number {
    return this.calls;
  }

  /**
   * Hands the held writes to LMDB and waits for every write so far: committed, and flushed to disk when
   * `flush`. Rejects with `ENGINE_PERSISTENCE_FAILED` when a write made after `since` (a {@link writeMark}) was
   * lost; without `since`, one made since the last such settle. After a failed commit it first drops what was
   * held, recounts what is stored and writes that count.
   */
  async settle(flush: boolean, since?: number): Promise<void> {
    this.commit();
    const upTo = this.calls;
    const from = since ?? this.settledCalls;
    let last: Promise<unknown>;
    do {
      last = this.lastWrite;
      await last;
    } while (last !== this.lastWrite);
    if (flush) await this.db.flushed;
    if (since === undefined) this.settledCalls = Math.max(this.settledCalls, upTo);
    if (this.broken) await this.recount();
    if (this.failures.some(([f, t]) => t > from && f < upTo)) throw failed();
  }

  /** After a failed hand-over: drops the held writes, counts what LMDB holds and writes that count. */
  private async recount(): Promise<void> {
    if (this.held.length > 0) this.failures.push([this.handedCalls, this.calls]);
    this.held = [];
    this.heldBytes = 0;
    this.heldReplaces = false;
    this.handedCalls = this.calls;
    this.known = new Map();
    this.oldKnown = new Map();
    this.pinned = new Map();
    const stats: Stats = { entries: 0, bytes: 0 };
    this.db.resetReadTxn();
    for (const { key, value } of this.db.getRange({ start: Buffer.from([1]) })) {
      stats.entries++;
      stats.bytes += key.length + value.length;
    }
    this.stats = stats;
    this.statsDirty = false;
    try {
      await this.db.put(Buffer.from(STATS_KEY), Buffer.from(JSON.stringify(stats)));
    } catch {
      throw failed(); // still broken: the next settle tries again
    }
    this.broken = false;
  }

  /** Hands over and waits for every write, then closes the environment. */
  async close(): Promise<void> {
    this.commit();
    await this.lastWrite;
    await this.db.flushed;
    await this.db.close();
  }

  /** For tests and benchmarks: the LMDB database under this store. */
  get database(): Database<Buffer, Buffer> {
    return this.db;
  }
}
