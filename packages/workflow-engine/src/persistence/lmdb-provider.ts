import { EngineError } from '../errors.js';
import { LmdbStore, loadLmdb } from './lmdb-store.js';
import { resolveStore, resolveStorePath } from './paths.js';
import { StoreCodec } from './store-codec.js';
import type { PersistenceLimits, PersistenceProvider, PersistenceSpec, PersistentStore } from './types.js';

const MiB = 1024 * 1024;

/** Default bounds of one store (README.md "Persistence limits"). */
export const DEFAULT_PERSISTENCE_LIMITS: Readonly<PersistenceLimits> = Object.freeze({
  maxKeyBytes: 256,
  maxValueBytes: 1 * MiB,
  maxQueueItems: 100_000,
  maxEntries: 1_000_000,
  maxStoreBytes: 1024 * MiB,
  maxTakeBytes: 8 * MiB,
  maxRunEntries: 200_000,
  maxRunBytes: 64 * MiB,
});

/** Options of {@link createLmdbPersistence}. */
export interface LmdbPersistenceOptions {
  /** The data directory: no store file may resolve outside it (S126). */
  dataDir: string;
  /** A relative directory under `dataDir` that store paths start from (a bootstrap `persistenceRoot`). */
  root?: string | undefined;
  /** Overrides of {@link DEFAULT_PERSISTENCE_LIMITS} (positive integers). */
  limits?: Partial<PersistenceLimits> | undefined;
  /** Prefix for messages, e.g. the deployment id. */
  label?: string | undefined;
  /**
   * A secret key (32 bytes or more) for values written in an authentication context (ADR 0130), used where a
   * step's store has no `hexSymmetricKey` (a key is derived from it with HKDF). Without either, such writes are
   * refused (`ENGINE_NOT_PERMITTED`). The agent derives one per deployment from `AGENT_STRING_SECRETKEYS`.
   */
  authKey?: Uint8Array | undefined;
}

function limitsOf(o: LmdbPersistenceOptions): PersistenceLimits {
  const out = { ...DEFAULT_PERSISTENCE_LIMITS };
  for (const k of Object.keys(out) as (keyof PersistenceLimits)[]) {
    const v = o.limits?.[k];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`limits.${k} must be a positive integer`);
    out[k] = v;
  }
  return out;
}

/**
 * Checks a step's key settings as opening its store would (strict hex, `obfuscate` needs a key), without
 * touching any file.
 * @throws EngineError `ENGINE_PERSISTENCE_INVALID`.
 */
export function checkPersistenceSpec(spec: PersistenceSpec, where: string): void {
  void new StoreCodec(spec.hexSymmetricKey, spec.obfuscate, where);
}

/**
 * The path of a step's store file under `dataDir` (and `root`), checked as {@link createLmdbPersistence} does:
 * for start-up validation before anything is created.
 * @throws EngineError `ENGINE_PERSISTENCE_INVALID`.
 */
export function storePathOf(dataDir: string, root: string | undefined, file: string, where: string): string {
  return resolveStorePath(dataDir, root === undefined ? file : `${root}/${file}`, where);
}

/**
 * A {@link PersistenceProvider} on LMDB (ADR 0052): one environment per persistence file under `dataDir`; steps
 * naming the same file share its store (they must agree on the key).
 * @throws RangeError for a limit that is not a positive integer.
 */
export function createLmdbPersistence(options: LmdbPersistenceOptions): PersistenceProvider {
  const limits = limitsOf(options);
  if (options.authKey !== undefined && options.authKey.length < 32)
    throw new RangeError('authKey must be at least 32 bytes');
  const stores = new Map<string, LmdbStore>();
  const prefix = options.label === undefined ? '' : `${options.label}: `;
  if (options.root !== undefined) resolveStorePath(options.dataDir, options.root, `${prefix}persistenceRoot`);
  return {
    async open(stepId: string, spec: PersistenceSpec): Promise<PersistentStore> {
      const lmdb = await loadLmdb();
      return new Promise((resolve) => {
        const where = `${prefix}step ${JSON.stringify(stepId.slice(0, 200))}`;
        const rel = options.root === undefined ? spec.file : `${options.root}/${spec.file}`;
        const { realRoot, path } = resolveStore(options.dataDir, rel, where);
        const open = stores.get(path);
        if (open) {
          if (open.hexKey?.toLowerCase() !== spec.hexSymmetricKey?.toLowerCase())
            throw new EngineError(
              'ENGINE_PERSISTENCE_INVALID',
              `${where}: another step opened this file with a different key`,
            );
          return resolve(open);
        }
        const store = LmdbStore.open(lmdb, realRoot, path, spec, limits, where, options.authKey);
        stores.set(path, store);
        resolve(store);
      });
    },
    async close(): Promise<void> {
      const all = [...stores.values()];
      stores.clear();
      await Promise.all(all.map((s) => s.close()));
    },
  };
}
