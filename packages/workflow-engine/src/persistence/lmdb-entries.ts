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

/** A Buffer over the same bytes (lmdb-js takes Buffers; no copy). */
function view(u8: Uint8Array): Buffer {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.length);
}

export function limit(message: string): EngineError {
  return new EngineError('ENGINE_PERSISTENCE_LIMIT', message);
}

/**
 * The entry layer of a store (ADR 0052): an overlay of uncommitted writes over LMDB, size accounting and limit
 * checks, and waiting for durability. `LmdbStore` builds the context calls on it.
 */
export class LmdbEntries {
  /** Writes handed to LMDB and not yet committed: read-your-writes until the commit lands. */
  protected readonly pending = new Map<string, Uint8Array | null>();
  protected lastWrite: Promise<unknown> = Promise.resolve();
  private failure: unknown;
  protected stats: Stats = { entries: 0, bytes: 0 };
  protected statsDirty = false;
  /** Set when overlay entries were dropped after a commit: the next LMDB read starts a fresh snapshot. */
  protected staleSnapshot = false;
  /** Writes of the call in progress and the promise of its last write ({@link mutate}). */
  private callWrites: [string, Uint8Array | null][] = [];
  private callPromise: Promise<unknown> | undefined;

  protected constructor(
    protected readonly db: RootDatabase<Buffer, Buffer>,
    protected readonly codec: StoreCodec,
    protected readonly limits: PersistenceLimits,
  ) {}

  // ---- raw access: overlay of pending writes over LMDB ----

  protected read(key: Uint8Array): Uint8Array | undefined {
    const k = view(key);
    const id = k.toString('latin1');
    if (this.pending.has(id)) return this.pending.get(id) ?? undefined;
    this.freshSnapshot();
    return this.db.getBinary(k);
  }

  /** Stored size of an entry, or -1 when absent (no copy of the value: lmdb's reused buffer). */
  protected sizeOf(key: Uint8Array): number {
    const k = view(key);
    const id = k.toString('latin1');
    if (this.pending.has(id)) return this.pending.get(id)?.length ?? -1;
    this.freshSnapshot();
    return this.db.getBinaryFast(k)?.length ?? -1;
  }

  /** A read after the overlay dropped a committed write must see that commit (no stale read snapshot). */
  protected freshSnapshot(): void {
    if (!this.staleSnapshot) return;
    this.staleSnapshot = false;
    this.db.resetReadTxn();
  }

  protected write(key: Uint8Array, stored: Uint8Array | null): void {
    const k = view(key);
    const id = k.toString('latin1');
    this.pending.set(id, stored);
    this.callWrites.push([id, stored]);
    this.callPromise = stored === null ? this.db.remove(k) : this.db.put(k, view(stored));
  }

  /**
   * After the last write of a call commits (the writes of one call share its transaction), its overlay entries
   * that were not overwritten since are dropped; one callback per call, not per write.
   */
  private trackCall(): void {
    const writes = this.callWrites;
    const p = this.callPromise;
    if (writes.length === 0 || p === undefined) return;
    this.callWrites = [];
    this.callPromise = undefined;
    this.lastWrite = p.then(
      () => {
        for (const [id, stored] of writes) {
          if (this.pending.get(id) !== stored) continue;
          this.pending.delete(id);
          this.staleSnapshot = true;
        }
      },
      (err: unknown) => {
        this.failure ??= err;
      },
    );
  }

  /** Writes one entry (after the limit checks) and updates the counts; {@link mutate} writes them. */
  protected setEntry(key: Uint8Array, value: Uint8Array | null): void {
    this.throwIfFailed();
    const old = this.sizeOf(key);
    const stored = value === null ? null : this.codec.seal(key, value);
    const entries = this.stats.entries + (stored ? 1 : 0) - (old >= 0 ? 1 : 0);
    const bytes =
      this.stats.bytes + (stored ? key.length + stored.length : 0) - (old >= 0 ? key.length + old : 0);
    if (entries > this.stats.entries && entries > this.limits.maxEntries)
      throw limit(`the store holds its limit of ${this.limits.maxEntries} entries`);
    if (bytes > this.stats.bytes && bytes > this.limits.maxStoreBytes)
      throw limit(`the store holds its limit of ${this.limits.maxStoreBytes} bytes`);
    if (old < 0 && stored === null) return;
    this.stats = { entries, bytes };
    this.statsDirty = true;
    this.write(key, stored);
  }

  /**
   * Runs one public write: its entries and the stats record are written in the same event turn, hence in the
   * same LMDB transaction (lmdb-js batches the writes of one turn), so the counts never drift from the data.
   */
  protected mutate<T>(fn: () => T): T {
    try {
      return fn();
    } finally {
      if (this.statsDirty) {
        this.statsDirty = false;
        this.write(STATS_KEY, enc.encode(JSON.stringify(this.stats)));
      }
      this.trackCall();
    }
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
    if (Buffer.byteLength(name, 'utf8') > this.limits.maxKeyBytes)
      throw limit(`${what} is longer than ${this.limits.maxKeyBytes} bytes`);
    return name;
  }

  protected valueBytes(value: string, what: string): Uint8Array {
    const bytes = Buffer.from(value, 'utf8');
    if (bytes.length > this.limits.maxValueBytes)
      throw limit(`${what} is larger than ${this.limits.maxValueBytes} bytes`);
    return bytes;
  }

  protected throwIfFailed(): void {
    if (this.failure === undefined) return;
    this.failure = undefined;
    throw new EngineError('ENGINE_PERSISTENCE_FAILED', 'an earlier write to the store failed');
  }

  async settle(flush: boolean): Promise<void> {
    await this.lastWrite;
    if (flush) await this.db.flushed;
    this.throwIfFailed();
  }

  /** Waits for every write, then closes the environment. */
  async close(): Promise<void> {
    await this.lastWrite;
    await this.db.flushed;
    await this.db.close();
  }

  /** For tests and benchmarks: the LMDB database under this store. */
  get database(): Database<Buffer, Buffer> {
    return this.db;
  }
}
