/** A step's persistence settings (docs/interfaces.md §4.2: `persistenceFile`, `persistenceFileFlush`, `persistence`). */
export interface PersistenceSpec {
  /** Relative path of the store file under the provider's root (never absolute, never `..`). */
  file: string;
  /** `persistenceFileFlush` (default true): wait for the disk flush, not only the commit, before a step returns. */
  flush: boolean;
  /** `persistence.hexSymmetricKey`: 64 hex characters; values are sealed with secretbox when set. Secret. */
  hexSymmetricKey: string | undefined;
  /** `persistence.obfuscate`: store key names as HMACs (needs `hexSymmetricKey`). */
  obfuscate: boolean;
}

/** Bounds of one store (README.md "Persistence limits"). */
export interface PersistenceLimits {
  /** Longest key or queue name, in UTF-8 bytes. */
  maxKeyBytes: number;
  /** Largest value or queue item, in UTF-8 bytes. */
  maxValueBytes: number;
  /** Most items in one queue. */
  maxQueueItems: number;
  /** Most entries (items, timestamps, deltas, queue items and headers) in one store. */
  maxEntries: number;
  /** Most stored bytes (keys and values as written, before LMDB's own overhead) in one store. */
  maxStoreBytes: number;
  /** Most bytes one `take(n)` returns (at least one item is always returned when the queue is not empty). */
  maxTakeBytes: number;
  /** Most writes (entries) one step run holds before its end commits them (ADR 0126). */
  maxRunEntries: number;
  /** Most bytes (storage keys and stored values) one step run holds before its end commits them (ADR 0126). */
  maxRunBytes: number;
}

/** One opened store: what the engine's host ops call. Every method is synchronous except {@link settle}. */
export interface PersistentStore {
  /**
   * Optional: a view of the store for one step run (ADR 0126). Its writes are visible to every run at once, but
   * only its own {@link settle} commits them, never another run's: a run that never settles (the process is killed)
   * leaves the store as if it never started. The engine begins one per step run and settles it once, as the run
   * ends; without `begin` it uses the store itself with {@link writeMark}.
   */
  begin?(): PersistentStore;
  getItem(key: string): string | null;
  /**
   * Optional (ADR 0130): a value written with {@link setAuthItem}, or null. Only authentication contexts call it; it
   * never reads what `setItem` wrote, nor `getItem` what it wrote.
   */
  getAuthItem?(key: string): string | null;
  /**
   * Optional (ADR 0130): `setPersistedItem` in an authentication context — stored sealed (never in clear, also in a
   * store without `hexSymmetricKey`), apart from `setItem`'s values. `null` removes the key.
   * @throws EngineError `ENGINE_NOT_PERMITTED` when the store has no key to seal it with.
   */
  setAuthItem?(key: string, value: string | null): void;
  /** `null` removes the key. */
  setItem(key: string, value: string | null): void;
  /**
   * Optional: `setItem` for each pair in order, with one stats update (a batch of buffered `setPersistedItem` calls). On a
   * breach the pairs before it stay written, the rest are not, and the error is thrown.
   */
  setItems?(pairs: readonly (readonly [string, string | null])[]): void;
  /**
   * Optional: {@link setItems} of pairs given as one text, the keys and then the values joined, with their lengths
   * in UTF-16 code units in `lengths`, two per pair (the key's, then the value's or -1 for null), already checked
   * to add up to the text (the sandbox's write buffer sends this form).
   */
  setJoined?(lengths: Int32Array, text: string): void;
  /**
   * Optional: true when {@link setJoined} of this batch is certain to store every pair without an error (no pair
   * breaches a limit, the store takes writes). The engine then answers the sandbox before storing it (ADR 0123).
   * False when in doubt: the batch is then stored before the answer, as always.
   */
  admitsJoined?(lengths: Int32Array, text: string): boolean;
  /**
   * The key and value bounds of `setItem`, in UTF-8 bytes. When given, the sandbox may buffer a run's
   * `setPersistedItem` calls (it checks these sizes at the call) and hand them over with `setItems`.
   */
  readonly itemLimits?: { readonly maxKeyBytes: number; readonly maxValueBytes: number };
  /**
   * Optional: starts storing the writes held so far at once ({@link settle} does it anyway). The engine calls it
   * when a processor run ends, so the commit overlaps the rest of the step.
   */
  commit?(): void;
  getTimestamp(key: string): number | null;
  setTimestamp(key: string, ts: number): void;
  /** Sets only when there is no timestamp yet or `ts` is greater; true when it set. */
  setTimestampIfLatest(key: string, ts: number): boolean;
  firstTimestamp(key: string): number | null;
  /** Stores `value` and returns `value - previous`, a missing previous value counting as 0 (`value` the first time). */
  delta(key: string, value: number): number;
  push(queue: string, item: string): void;
  take(queue: string, n: number): string[];
  returnItem(queue: string, item: string): void;
  queueSize(queue: string): number;
  /**
   * Optional: a counter of the store's writing calls. The engine reads it when a step run starts and passes it to
   * {@link settle}, so the run hears of every failed write it made, also when another run settled first.
   */
  readonly writeMark?: number;
  /**
   * Resolves once every write made so far is committed, and flushed to disk when `flush`.
   * @param since - a {@link writeMark}: report failed writes made after it (without it: since the last settle).
   * @throws EngineError `ENGINE_PERSISTENCE_FAILED` when a write failed (as a rejected promise).
   */
  settle(flush: boolean, since?: number): Promise<void>;
}

/**
 * Where step stores come from: implemented by the app and injected as `EngineHost.persistence`
 * (`createLmdbPersistence` is the implementation this package ships).
 */
export interface PersistenceProvider {
  /**
   * Opens (or creates) the store of one step. Steps of one engine naming the same file share one store.
   * @throws EngineError `ENGINE_PERSISTENCE_INVALID`, `ENGINE_PERSISTENCE_CORRUPT`, `ENGINE_PERSISTENCE_KEY`,
   *   `ENGINE_PERSISTENCE_FAILED` (as a rejected promise).
   */
  open(stepId: string, spec: PersistenceSpec): Promise<PersistentStore>;
  /** Waits for pending writes and closes every store it opened. */
  close(): Promise<void>;
}
