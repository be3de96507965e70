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

/** What the store knows of one storage key (ADR 0066, 0125, 0126). */
interface Known {
  /**
   * The stored size (-1: absent) as the writes so far leave it, pending ones of every open run included (after a
   * failed hand-over, until the recount forgets every entry, it may count a write that was not stored).
   */
  size: number;
  /**
   * The newest write not yet committed, of whichever run made it (every run reads it at once): the stored bytes, null
   * for a removal; undefined when none.
   */
  pending: Uint8Array | null | undefined;
  /** The write number of {@link pending} (the store numbers every write it takes). */
  pendingSeq: number;
  /** The stored size as the writes handed to LMDB leave it (-1: absent): what the stats record counts. */
  committed: number;
  /** The write number of the newest write of this key handed to LMDB (0: none since the entry was made). */
  handedSeq: number;
  /** Its id while it is kept in `pinned` (its generation was let go while its write was pending). */
  pinnedAs: string | undefined;
}

/**
 * Writes waiting to be handed to LMDB, four items each, flat (no array per write): what the store knows of the
 * key, the storage key, the stored bytes (null: remove) and the write's number.
 */
type Held = (Known | Uint8Array | null | number)[];

/**
 * The writes of one step run (ADR 0126): held until that run settles, then handed to LMDB in one transaction with
 * the stats record. No other run's settle hands them over, so a run that never finishes (the process is killed)
 * leaves nothing of itself in the file.
 */
export class RunWrites {
  held: Held = [];
  heldBytes = 0;
  /** Writes held (entries), against the run's limit. */
  heldEntries = 0;
  /** Some write of this run found its key pending (its own or another run's): see {@link LmdbEntries.handOver}. */
  replaces = false;
  /** The hand-over of these writes, once made. */
  lastWrite: Promise<unknown> = Promise.resolve();
  /** Its writes were lost (a failed hand-over of its own or of another run): it refuses writes and fails. */
  failed = false;
  /** Settled: it takes no more writes. */
  ended = false;
  constructor(
    /** Handed over as soon as this many entries or bytes are held (the store's own run), or never (a step run). */
    readonly handAt: { entries: number; bytes: number } | undefined,
  ) {}
}

/** The hand-over bound of the store's own run (calls made on the store, not through a step run's view). */
const OWN_HAND_AT = HELD_WRITES;

/**
 * The entry layer of a store (ADR 0052, 0066, 0126): an overlay of writes not yet committed over LMDB, size
 * accounting and limit checks, and waiting for durability. `LmdbStore` builds the context calls on it.
 *
 * - Writes are checked and counted at the call and visible at once to every run (the overlay), but held in memory
 *   by the run that made them ({@link RunWrites}) until that run settles, which hands them to LMDB together with the
 *   stats record in one event turn and so in one LMDB transaction. Another run's settle never takes them: a run
 *   that never finishes leaves the file as if it never started, and the counts never drift from the data.
 * - Every write is numbered. Per key, a hand-over writes a run's last write only when no newer write of that key was
 *   handed over before it, so runs that commit out of order leave the newest write of each key.
 * - The stats record counts what the hand-overs leave ({@link Known.committed}); the limits are checked against the
 *   counts with every pending write included, so no run's commit can take the store over a limit.
 * - A hand-over LMDB refuses at commit (disk full, I/O error) fails its run and every open run with held writes, and
 *   stops every later write until a settle has recounted what is stored: the counts never include writes that were
 *   not stored.
 */
export class LmdbEntries {
  /**
   * Recently seen keys by id, in two generations of half {@link SIZE_CACHE_KEYS}: their size, and the newest write
   * not yet committed (read-your-writes until its commit lands). A key with a pending write is never let go (see
   * {@link add}).
   */
  private known = new Map<string, Known>();
  private oldKnown = new Map<string, Known>();
  /** Entries of a generation let go while their write was pending, until its commit: each is moved here once. */
  private pinned = new Map<string, Known>();
  /** The number of the last write taken (0: none). */
  private seq = 0;
  /** Counts with every pending write included: the limits are checked against these. */
  protected stats: Stats = { entries: 0, bytes: 0 };
  /** Counts of what the hand-overs so far leave in LMDB: the stats record. */
  private committedStats: Stats = { entries: 0, bytes: 0 };
  /** The last hand-over (every earlier one commits before it: lmdb-js commits in order). */
  protected lastWrite: Promise<unknown> = Promise.resolve();
  /** The run writing now: a step run's view sets it around each call ({@link within}); else the store's own. */
  private writer: RunWrites;
  /** Writes made on the store itself, not through a step run (tests, tools): handed over at a bound or a settle. */
  private readonly own = new RunWrites(OWN_HAND_AT);
  /** Runs with held writes or a hand-over not yet settled. */
  private readonly open = new Set<RunWrites>();
  /** Calls that wrote, counted ({@link writeMark}). */
  private calls = 0;
  /** True while the current call has written. */
  private callWrote = false;
  /** Set when a hand-over failed: writes are refused until a settle has recounted the store. */
  private broken = false;
  /** The store's own run lost writes since its last settle. */
  private ownFailedAt = -1;
  /** Set when pending writes were cleared after a commit: the next LMDB read starts a fresh snapshot. */
  protected staleSnapshot = false;

  protected constructor(
    protected readonly db: RootDatabase<Buffer, Buffer>,
    protected readonly codec: StoreCodec,
    protected readonly limits: PersistenceLimits,
  ) {
    this.writer = this.own;
  }

  /** Loads the stats record's counts (at open): nothing is pending yet. */
  protected setCounts(stats: Stats): void {
    this.stats = { ...stats };
    this.committedStats = { ...stats };
  }

  // ---- step runs ----

  /** A new step run's writes (ADR 0126): pass it to {@link within} around its calls and settle it once. */
  protected newRun(): RunWrites {
    return new RunWrites(undefined);
  }

  /** Runs `fn` (one public call) with `run` as the writer. */
  protected within<T>(run: RunWrites, fn: () => T): T {
    const before = this.writer;
    this.writer = run;
    try {
      return fn();
    } finally {
      this.writer = before;
    }
  }

  // ---- raw access: overlay of pending writes over LMDB ----

  /** The map key of a storage key: its bytes as a latin1 string (one character per byte). */
  protected idOf(key: Uint8Array): string {
    return view(key).toString('latin1');
  }

  protected read(key: Uint8Array): Uint8Array | undefined {
    const id = this.idOf(key);
    const k = this.lookup(id);
    if (k?.pending !== undefined) return k.pending ?? undefined;
    this.freshSnapshot();
    const v = this.db.getBinary(view(key));
    const size = v === undefined ? -1 : v.length;
    if (k !== undefined) k.size = k.committed = size;
    else this.add(id, known(size));
    return v;
  }

  /** True when `id` has a pending removal (a queue item taken by a run not yet committed). */
  protected removedPending(id: string): boolean {
    return this.lookup(id)?.pending === null;
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
    const read = known(this.db.getBinaryFast(view(key))?.length ?? -1);
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
   * store's limits or the writing run's, and the store takes writes (no failed hand-over waiting for a settle).
   */
  protected hasRoom(entries: number, bytes: number): boolean {
    const run = this.writer;
    return (
      !this.broken &&
      !run.failed &&
      !run.ended &&
      this.stats.entries + entries <= this.limits.maxEntries &&
      this.stats.bytes + bytes <= this.limits.maxStoreBytes &&
      (run.handAt !== undefined ||
        (run.heldEntries + entries <= this.limits.maxRunEntries &&
          run.heldBytes + bytes <= this.limits.maxRunBytes))
    );
  }

  /** Writes one entry (sealed here) after the limit checks; see {@link putEntry}. */
  protected setEntry(key: Uint8Array, value: Uint8Array | null): void {
    this.putEntry(key, value === null ? null : this.codec.seal(key, value));
  }

  /**
   * Checks one write of the current call against the limits, counts it and holds it in the writing run (visible at
   * once); {@link mutate} ends the call. `knownId`: the key's id (its bytes as latin1) when the caller has it.
   */
  protected putEntry(key: Uint8Array, stored: Uint8Array | null, knownId?: string): void {
    const run = this.writer;
    if (this.broken || run.failed) throw failed();
    if (run.ended)
      throw new EngineError('ENGINE_PERSISTENCE_FAILED', 'the step run has ended: it takes no writes');
    const id = knownId ?? this.idOf(key);
    const k = this.entryOf(id, key);
    const old = k.size;
    if (old < 0 && stored === null) return;
    const add = key.length + (stored?.length ?? 0);
    if (
      run.handAt === undefined &&
      (run.heldEntries >= this.limits.maxRunEntries || run.heldBytes + add > this.limits.maxRunBytes)
    )
      throw limit(
        `one step run holds its limit of ${this.limits.maxRunEntries} writes or ${this.limits.maxRunBytes} bytes not yet committed`,
      );
    const entries = this.stats.entries + (stored ? 1 : 0) - (old >= 0 ? 1 : 0);
    const bytes =
      this.stats.bytes + (stored ? key.length + stored.length : 0) - (old >= 0 ? key.length + old : 0);
    if (entries > this.stats.entries && entries > this.limits.maxEntries)
      throw limit(`the store holds its limit of ${this.limits.maxEntries} entries`);
    if (bytes > this.stats.bytes && bytes > this.limits.maxStoreBytes)
      throw limit(`the store holds its limit of ${this.limits.maxStoreBytes} bytes`);
    if (k.pending !== undefined) run.replaces = true;
    const seq = ++this.seq;
    k.size = stored === null ? -1 : stored.length;
    k.pending = stored;
    k.pendingSeq = seq;
    if (run.held.length === 0) this.open.add(run);
    run.held.push(k, key, stored, seq);
    run.heldBytes += add;
    run.heldEntries++;
    this.stats.entries = entries;
    this.stats.bytes = bytes;
    this.callWrote = true;
  }

  /**
   * Runs one public call: its writes are held by the writing run and handed to LMDB with that run's others, so
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
        const run = this.writer,
          at = run.handAt;
        if (at !== undefined && (run.heldEntries >= at.entries || run.heldBytes >= at.bytes))
          this.handOver(run);
      }
    }
  }

  /**
   * Hands the run's held writes and the stats record to LMDB in one event turn, hence one transaction. Per key only
   * the run's last write goes, and only when no newer write of the key was handed over before. After the commit,
   * the overlay forgets each write that is still the newest of its key; after a failed commit too (they were not
   * stored), and the store fails every open run and stops taking writes until a settle has recounted it.
   */
  private handOver(run: RunWrites): void {
    if (run.held.length === 0) return;
    const writes = run.held;
    const replaces = run.replaces;
    run.held = [];
    run.heldBytes = 0;
    run.heldEntries = 0;
    run.replaces = false;
    // The run's last write of each key, looked up only when some write found its key pending.
    let last: Map<Known, number> | undefined;
    if (replaces) {
      last = new Map();
      for (let i = 0; i < writes.length; i += 4) last.set(writes[i] as Known, writes[i + 3] as number);
    }
    // lmdb-js gives the writes of one batch one promise; every distinct one is watched (no unhandled rejection).
    const commits: Promise<unknown>[] = [];
    const watch = (q: Promise<unknown>): void => {
      if (q !== commits[commits.length - 1]) commits.push(q);
    };
    const c = this.committedStats;
    try {
      // lmdb-js takes any Uint8Array as a binary key or value (its README, `keyEncoding: 'binary'`): views go as
      // they are.
      for (let i = 0; i < writes.length; i += 4) {
        const k = writes[i] as Known,
          key = writes[i + 1] as Buffer,
          stored = writes[i + 2] as Buffer | null,
          seq = writes[i + 3] as number;
        if ((last !== undefined && last.get(k) !== seq) || k.handedSeq > seq) continue;
        k.handedSeq = seq;
        const was = k.committed;
        if (stored === null && was < 0) continue;
        k.committed = stored === null ? -1 : stored.length;
        c.entries += (stored ? 1 : 0) - (was >= 0 ? 1 : 0);
        c.bytes += (stored ? key.length + stored.length : 0) - (was >= 0 ? key.length + was : 0);
        watch(stored === null ? this.db.remove(key) : this.db.put(key, stored));
      }
      if (commits.length > 0) watch(this.db.put(Buffer.from(STATS_KEY), Buffer.from(JSON.stringify(c))));
    } catch (err) {
      // LMDB refused at the call: what was handed over may or may not be stored; a settle reports and recounts.
      commits.push(Promise.reject(err instanceof Error ? err : new Error(String(err))));
    }
    const p =
      commits.length === 0 ? Promise.resolve() : commits.length === 1 ? commits[0]! : Promise.all(commits);
    const drop = (): void => {
      for (let i = 0; i < writes.length; i += 4) {
        const k = writes[i] as Known;
        if (k.pendingSeq !== writes[i + 3] || k.pending === undefined) continue; // a newer write is pending
        k.pending = undefined;
        if (k.pinnedAs !== undefined) {
          this.pinned.delete(k.pinnedAs);
          k.pinnedAs = undefined;
        }
        this.staleSnapshot = true;
      }
    };
    run.lastWrite = this.lastWrite = p.then(drop, (err: unknown) => {
      quietCommitError(err);
      drop();
      this.fail(run);
    });
  }

  /**
   * After a failed hand-over: the run and every open run with held writes lose them (they fail at their settle and
   * refuse further writes), and every write is refused until a settle has recounted the store, which also forgets
   * every remembered size (some count writes that were not stored).
   */
  private fail(run: RunWrites): void {
    this.broken = true;
    this.wakeOnFailure();
    this.failureSignal = new Promise((resolve) => (this.wakeOnFailure = resolve));
    for (const r of [run, ...this.open]) {
      if (r.held.length === 0 && r !== run) continue;
      r.failed = true;
      r.held = [];
      r.heldBytes = 0;
      r.heldEntries = 0;
      r.replaces = false;
    }
    if (this.own.failed) this.ownFailedAt = this.calls;
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

  /** Hands the writes the store's own calls hold to LMDB now (one transaction); {@link settle} waits for them. */
  commit(): void {
    if (!this.broken) this.handOver(this.own);
  }

  /** The number of calls that wrote so far. */
  get writeMark(): number {
    return this.calls;
  }

  /**
   * Settles a step run (ADR 0126): hands its held writes to LMDB and waits for that commit, and the flush when
   * `flush`. Rejects with `ENGINE_PERSISTENCE_FAILED` when any of its writes was lost. The run takes no writes after.
   */
  protected async settleRun(run: RunWrites, flush: boolean): Promise<void> {
    run.ended = true;
    if (!this.broken && !run.failed) this.handOver(run);
    let last: Promise<unknown>;
    do {
      last = run.lastWrite;
      await last;
    } while (last !== run.lastWrite);
    this.open.delete(run);
    if (run.failed) {
      if (this.broken) await this.recountAfterAll().catch(() => undefined); // a later settle tries again
      throw failed();
    }
    if (flush) await this.flushedAll();
  }

  /**
   * Hands the store's own held writes to LMDB and waits for every hand-over so far: committed, and flushed to disk
   * when `flush`. Rejects with `ENGINE_PERSISTENCE_FAILED` when a write made on the store itself after `since` (a
   * {@link writeMark}; without it, since the last settle) was lost. After a failed commit it first recounts what is
   * stored and writes that count.
   */
  async settle(flush: boolean, since?: number): Promise<void> {
    this.commit();
    let last: Promise<unknown>;
    do {
      last = this.lastWrite;
      await last;
    } while (last !== this.lastWrite);
    if (flush) await this.flushedAll();
    else if (this.broken) await this.recountAfterAll();
    const lost = this.own.failed && (since === undefined || this.ownFailedAt > since);
    if (since === undefined || lost) {
      this.own.failed = false;
      this.open.delete(this.own);
    }
    if (lost) throw failed();
  }

  /**
   * Resolves once every commit so far is flushed to disk. lmdb-js resolves its `flushed` only when a flush succeeds:
   * after a failed commit it never settles. So a failure ({@link fail}) wakes the wait, the store is recounted, and
   * the recount's own commit (written after everything before it) is waited for instead.
   * @throws EngineError `ENGINE_PERSISTENCE_FAILED` when the recount cannot be written (the disk is still full).
   */
  private async flushedAll(): Promise<void> {
    for (let tries = 0; ; tries++) {
      if (this.broken) await this.recountAfterAll();
      const woken = this.failureSignal;
      const ok = await Promise.race([
        this.db.flushed.then(
          () => true,
          () => false,
        ),
        woken.then(() => false),
      ]);
      if (ok) return;
      await this.recountAfterAll();
      if (tries >= 3) throw failed();
    }
  }

  /** Resolves {@link failureSignal}; declared first, so the signal's initialiser sets it. */
  private wakeOnFailure!: () => void;
  /** Resolved (and made anew) at each failed hand-over: wakes {@link flushedAll}. */
  private failureSignal: Promise<void> = new Promise((resolve) => (this.wakeOnFailure = resolve));

  /** Waits for every hand-over made so far (a recount must see them all), then recounts once. */
  private async recountAfterAll(): Promise<void> {
    let last: Promise<unknown>;
    do {
      last = this.lastWrite;
      await last.catch(() => undefined);
    } while (last !== this.lastWrite);
    if (this.broken) await (this.recounting ??= this.recount().finally(() => (this.recounting = undefined)));
  }

  /** The recount under way, shared by the settles that wait for it. */
  private recounting: Promise<void> | undefined;

  /** After a failed hand-over: counts what LMDB holds and writes that count; the overlay is forgotten. */
  private async recount(): Promise<void> {
    for (const r of this.open)
      if (r.held.length > 0) {
        r.failed = true;
        r.held = [];
        r.heldBytes = 0;
        r.heldEntries = 0;
      }
    this.known = new Map();
    this.oldKnown = new Map();
    this.pinned = new Map();
    this.forgetOverlay();
    const stats: Stats = { entries: 0, bytes: 0 };
    this.db.resetReadTxn();
    for (const { key, value } of this.db.getRange({ start: Buffer.from([1]) })) {
      stats.entries++;
      stats.bytes += key.length + value.length;
    }
    try {
      await this.db.put(Buffer.from(STATS_KEY), Buffer.from(JSON.stringify(stats)));
    } catch {
      throw failed(); // still broken: the next settle tries again
    }
    this.setCounts(stats);
    this.broken = false;
  }

  /** Called when the overlay is forgotten after a failed commit: state built on it is dropped too. */
  protected forgetOverlay(): void {}

  /** Hands over every held write (runs still open at close included) and waits, then closes the environment. */
  async close(): Promise<void> {
    if (!this.broken) for (const r of [this.own, ...this.open]) this.handOver(r);
    await this.lastWrite.catch(() => undefined);
    await this.db.flushed;
    await this.db.close();
  }

  /** For tests and benchmarks: the LMDB database under this store. */
  get database(): Database<Buffer, Buffer> {
    return this.db;
  }
}

/**
 * lmdb-js rejects a failed commit's writes with an error whose `commitError` is a second promise, rejected with the
 * cause (ENOSPC, EIO…) and handled by nobody: handled here, so it is no unhandled rejection (see lmdb-guard.ts).
 */
function quietCommitError(err: unknown): void {
  const inner = (err as { commitError?: unknown } | null)?.commitError;
  if (inner instanceof Promise) inner.catch(() => undefined);
}

function known(size: number): Known {
  return { size, pending: undefined, pendingSeq: 0, committed: size, handedSeq: 0, pinnedAs: undefined };
}
