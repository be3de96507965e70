import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLmdbPersistence,
  DEFAULT_PERSISTENCE_LIMITS,
  EngineError,
  type PersistenceProvider,
  type PersistenceSpec,
  type PersistentStore,
} from '../src/index.js';
import { LmdbStore, loadLmdb } from '../src/persistence/lmdb-store.js';
import { resolveStore } from '../src/persistence/paths.js';
import { KEY_A, KEY_B, sha256File, tempDataDir } from './persistence-helpers.js';

const lmdb = await loadLmdb();

const spec = (file: string, extra: Partial<PersistenceSpec> = {}): PersistenceSpec => ({
  file,
  flush: true,
  hexSymmetricKey: undefined,
  obfuscate: false,
  ...extra,
});

let dir: string;
let cleanup: () => void;
const providers: PersistenceProvider[] = [];

function provider(limits = {}, root?: string): PersistenceProvider {
  const p = createLmdbPersistence({ dataDir: dir, root, limits });
  providers.push(p);
  return p;
}

/** Writes through a store, closes it and reopens the file with a fresh provider (a restart). */
async function reopen(file: string, extra: Partial<PersistenceSpec> = {}): Promise<PersistentStore> {
  for (const p of providers.splice(0)) await p.close();
  return provider().open('s', spec(file, extra));
}

beforeEach(() => {
  ({ dir, cleanup } = tempDataDir());
});

afterEach(async () => {
  for (const p of providers.splice(0)) await p.close();
  cleanup();
});

describe('createLmdbPersistence: items, timestamps, deltas', () => {
  it('stores items, returns null when absent, removes with null, and survives a restart', async () => {
    const s = await provider().open('s', spec('a.store'));
    expect(s.getItem('k')).toBeNull();
    s.setItem('k', 'v1');
    s.setItem('gone', 'x');
    s.setItem('gone', null);
    expect(s.getItem('k')).toBe('v1');
    await s.settle(true);
    const again = await reopen('a.store');
    expect(again.getItem('k')).toBe('v1');
    expect(again.getItem('gone')).toBeNull();
  });

  it('timestamps: get, set, setIfLatest only when newer, firstTimestamp keeps the first', async () => {
    const s = await provider().open('s', spec('t.store'));
    expect(s.getTimestamp('lastRun')).toBeNull();
    expect(s.firstTimestamp('lastRun')).toBeNull();
    expect(s.setTimestampIfLatest('lastRun', 100)).toBe(true);
    expect(s.setTimestampIfLatest('lastRun', 100)).toBe(false);
    expect(s.setTimestampIfLatest('lastRun', 50)).toBe(false);
    expect(s.setTimestampIfLatest('lastRun', 200)).toBe(true);
    s.setTimestamp('lastRun', 10);
    expect(s.getTimestamp('lastRun')).toBe(10);
    expect(s.firstTimestamp('lastRun')).toBe(100);
    await s.settle(true);
    const again = await reopen('t.store');
    expect([again.getTimestamp('lastRun'), again.firstTimestamp('lastRun')]).toEqual([10, 100]);
  });

  it('delta returns value − previous (the value itself the first time), across restarts', async () => {
    const s = await provider().open('s', spec('d.store'));
    expect(s.delta('bytes', 10)).toBe(10);
    expect(s.delta('bytes', 25)).toBe(15);
    await s.settle(true);
    expect((await reopen('d.store')).delta('bytes', 20)).toBe(-5);
  });

  it('steps naming the same file share one store; a different key for it is refused', async () => {
    const p = provider();
    const a = await p.open('a', spec('shared.store'));
    const b = await p.open('b', spec('shared.store'));
    a.setItem('k', 'from a');
    expect(b.getItem('k')).toBe('from a');
    await expect(p.open('c', spec('shared.store', { hexSymmetricKey: KEY_A }))).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_INVALID',
    );
  });

  it('places stores under root inside the data directory', async () => {
    const s = await provider({}, 'deployments/one').open('s', spec('x/y.store'));
    s.setItem('k', 'v');
    await s.settle(true);
    expect(statSync(join(dir, 'deployments/one/x/y.store')).isFile()).toBe(true);
  });
});

describe('createLmdbPersistence: queues', () => {
  it('push/take is FIFO, take removes, returnItem puts one back at the head', async () => {
    const s = await provider().open('s', spec('q.store'));
    for (const x of ['a', 'b', 'c', 'd']) s.push('default', x);
    expect(s.take('default', 2)).toEqual(['a', 'b']);
    s.returnItem('default', 'b');
    expect(s.queueSize('default')).toBe(3);
    expect(s.take('default', 10)).toEqual(['b', 'c', 'd']);
    expect(s.take('default', 10)).toEqual([]);
    expect(s.take('default', 0)).toEqual([]);
  });

  it('keeps named queues apart and survives a restart', async () => {
    const s = await provider().open('s', spec('q.store'));
    s.push('one', '1');
    s.push('two', '2');
    s.push('one', '11');
    await s.settle(true);
    const again = await reopen('q.store');
    expect(again.take('two', 5)).toEqual(['2']);
    expect(again.take('one', 1)).toEqual(['1']);
    await again.settle(true);
    expect((await reopen('q.store')).take('one', 5)).toEqual(['11']);
  });

  it('take(n) stops at the byte cap but always returns one item', async () => {
    const s = await provider({ maxTakeBytes: 10, maxValueBytes: 64 }).open('s', spec('q.store'));
    s.push('q', 'x'.repeat(30));
    s.push('q', 'y'.repeat(4));
    s.push('q', 'z'.repeat(4));
    expect(s.take('q', 3)).toEqual(['x'.repeat(30)]);
    expect(s.take('q', 3)).toEqual(['yyyy', 'zzzz']);
  });
});

describe('S126: store paths stay inside the data directory', () => {
  const outside = () => join(dir, '..', `outside-${process.pid}-${Date.now()}`);

  it.each(['../x.store', '/tmp/abs.store', 'a/../b.store', '..', '', 'a/', 'nul\u0000.store'])(
    'S126: refuses %j naming the step, creating nothing',
    async (file) => {
      const err: unknown = await provider()
        .open('step-9', spec(file))
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'EngineError', code: 'ENGINE_PERSISTENCE_INVALID' });
      expect((err as Error).message).toContain('step-9');
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it('S126: refuses a symlinked directory or file leading out, and a dangling symlink; nothing created', async () => {
    const out = outside();
    mkdirSync(out);
    try {
      symlinkSync(out, join(dir, 'link'));
      symlinkSync(join(out, 'target.store'), join(dir, 'file.store'));
      symlinkSync(join(out, 'dangling.store'), join(dir, 'dangling.store'));
      for (const file of ['link/x.store', 'file.store', 'dangling.store']) {
        await expect(provider().open('s', spec(file))).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_INVALID');
      }
      expect(readdirSync(out)).toEqual([]);
    } finally {
      cleanupDir(out);
    }
  });

  // ADR 0067: the path is checked, then opened; what is swapped in between must not redirect the open.
  it.each([
    [
      'a directory on the way',
      'sub/x.store',
      (out: string) => {
        rmSync(join(dir, 'sub'), { recursive: true });
        symlinkSync(out, join(dir, 'sub'));
      },
    ],
    [
      'the store file',
      'sub/x.store',
      (out: string) => symlinkSync(join(out, 'x.store'), join(dir, 'sub', 'x.store')),
    ],
    [
      'the lock file',
      'sub/x.store',
      (out: string) => symlinkSync(join(out, 'x.store-lock'), join(dir, 'sub', 'x.store-lock')),
    ],
  ])(
    'S126: %s swapped for a symlink after the path check does not redirect the open',
    (_what, file, swap) => {
      const out = outside();
      mkdirSync(out);
      try {
        mkdirSync(join(dir, 'sub'));
        const { realRoot, path } = resolveStore(dir, file, 'step s');
        swap(out);
        expect(() =>
          LmdbStore.open(lmdb, realRoot, path, spec(file), DEFAULT_PERSISTENCE_LIMITS, 'step s'),
        ).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_INVALID');
        expect(readdirSync(out)).toEqual([]);
      } finally {
        cleanupDir(out);
      }
    },
  );

  it('S126: a symlink that stays inside the data directory is followed', async () => {
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'alias'));
    const s = await provider().open('s', spec('alias/x.store'));
    s.setItem('k', 'v');
    await s.settle(true);
    expect(existsSync(join(dir, 'real', 'x.store'))).toBe(true);
  });
});

function cleanupDir(p: string): void {
  rmSync(p, { recursive: true, force: true });
}

describe('S128: a corrupt or foreign file stops start-up and is left untouched', () => {
  const cases: [string, () => Buffer][] = [
    ['random bytes', () => randomBytes(64 * 1024)],
    ['an empty file', () => Buffer.alloc(0)],
    [
      'a SQLite database header',
      () => Buffer.concat([Buffer.from('SQLite format 3\u0000'), randomBytes(8192)]),
    ],
    ['a PNG', () => Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(4096)])],
  ];

  it.each(cases)('S128: %s → ENGINE_PERSISTENCE_CORRUPT, same bytes, no lock file', async (_name, make) => {
    const path = join(dir, 'bad.store');
    writeFileSync(path, make());
    const before = sha256File(path);
    const size = statSync(path).size;
    await expect(provider().open('s', spec('bad.store'))).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_CORRUPT',
    );
    expect(sha256File(path)).toBe(before);
    expect(statSync(path).size).toBe(size);
    expect(existsSync(`${path}-lock`)).toBe(false);
  });

  it('S128: another program’s LMDB file → ENGINE_PERSISTENCE_CORRUPT, same bytes', async () => {
    const path = join(dir, 'other.store');
    const other = open<string, string>({ path, noSubdir: true });
    await other.put('customer:1', '{"name":"x"}');
    await other.close();
    const before = sha256File(path);
    await expect(provider().open('s', spec('other.store'))).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_CORRUPT',
    );
    expect(sha256File(path)).toBe(before);
  });

  it('S128: a store with its meta record rewritten by someone else → ENGINE_PERSISTENCE_CORRUPT', async () => {
    const s = await provider().open('s', spec('m.store'));
    s.setItem('k', 'v');
    for (const p of providers.splice(0)) await p.close();
    const raw = open({
      path: join(dir, 'm.store'),
      noSubdir: true,
      encoding: 'binary',
      keyEncoding: 'binary',
    });
    await raw.put(Buffer.from([0, 0]), Buffer.from('{"format":"someone-else","version":1}'));
    await raw.close();
    const before = sha256File(join(dir, 'm.store'));
    await expect(provider().open('s', spec('m.store'))).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_CORRUPT',
    );
    expect(sha256File(join(dir, 'm.store'))).toBe(before);
  });
});

describe('S131: hexSymmetricKey encrypts values at rest', () => {
  const secret = 'plaintext-needle-7f3a91';

  async function writeEncrypted(obfuscate: boolean): Promise<void> {
    const s = await provider().open('s', spec('enc.store', { hexSymmetricKey: KEY_A, obfuscate }));
    s.setItem('customer-name-key', secret);
    s.push('outbox-queue', `${secret}-queued`);
    s.setTimestamp('lastRun', 1_700_000_000_000);
    await s.settle(true);
    for (const p of providers.splice(0)) await p.close();
  }

  const files = () => readdirSync(dir).map((f) => readFileSync(join(dir, f)));

  it('S131: plaintext values cannot be found in the store files; the key opens them after a restart', async () => {
    await writeEncrypted(false);
    for (const bytes of files()) {
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
      expect(bytes.includes(Buffer.from(KEY_A))).toBe(false);
      expect(bytes.includes(Buffer.from(KEY_A, 'hex'))).toBe(false);
    }
    const s = await reopen('enc.store', { hexSymmetricKey: KEY_A });
    expect(s.getItem('customer-name-key')).toBe(secret);
    expect(s.take('outbox-queue', 1)).toEqual([`${secret}-queued`]);
  });

  it('S131: with obfuscate, key and queue names are not in the files either', async () => {
    await writeEncrypted(true);
    for (const bytes of files()) {
      for (const name of ['customer-name-key', 'outbox-queue', 'lastRun', secret])
        expect(bytes.includes(Buffer.from(name))).toBe(false);
    }
    const s = await reopen('enc.store', { hexSymmetricKey: KEY_A, obfuscate: true });
    expect(s.getItem('customer-name-key')).toBe(secret);
  });

  it('S131: a wrong key, or no key, at restart → ENGINE_PERSISTENCE_KEY and the file is not rewritten', async () => {
    await writeEncrypted(false);
    const path = join(dir, 'enc.store');
    const before = sha256File(path);
    for (const hexSymmetricKey of [KEY_B, undefined]) {
      await expect(provider().open('s', spec('enc.store', { hexSymmetricKey }))).toThrowCode(
        EngineError,
        'ENGINE_PERSISTENCE_KEY',
      );
    }
    expect(sha256File(path)).toBe(before);
    expect((await reopen('enc.store', { hexSymmetricKey: KEY_A })).getItem('customer-name-key')).toBe(secret);
  });

  it('S131: a key on a store created without one → ENGINE_PERSISTENCE_KEY', async () => {
    const s = await provider().open('s', spec('plain.store'));
    s.setItem('k', 'v');
    await s.settle(true);
    for (const p of providers.splice(0)) await p.close();
    await expect(provider().open('s', spec('plain.store', { hexSymmetricKey: KEY_A }))).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_KEY',
    );
  });

  it.each([['z'.repeat(64)], ['ab'.repeat(31)], ['ab'.repeat(33)], [` ${'ab'.repeat(32)}`]])(
    'refuses a malformed key %j with ENGINE_PERSISTENCE_INVALID before creating anything',
    async (hexSymmetricKey) => {
      await expect(provider().open('s', spec('k.store', { hexSymmetricKey }))).toThrowCode(
        EngineError,
        'ENGINE_PERSISTENCE_INVALID',
      );
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it('refuses obfuscate without a key', async () => {
    await expect(provider().open('s', spec('o.store', { obfuscate: true }))).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_INVALID',
    );
  });

  it('a sealed value moved to another key does not open (ENGINE_PERSISTENCE_CORRUPT)', async () => {
    const s = await provider().open('s', spec('mv.store', { hexSymmetricKey: KEY_A }));
    s.setItem('a', 'value of a');
    s.setItem('b', 'value of b');
    await s.settle(true);
    for (const p of providers.splice(0)) await p.close();
    const raw = open({
      path: join(dir, 'mv.store'),
      noSubdir: true,
      encoding: 'binary',
      keyEncoding: 'binary',
    });
    await raw.put(Buffer.from([1, 0x62]), raw.getBinary(Buffer.from([1, 0x61]))!);
    await raw.close();
    const again = await reopen('mv.store', { hexSymmetricKey: KEY_A });
    expect(again.getItem('a')).toBe('value of a');
    expect(() => again.getItem('b')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_CORRUPT');
  });
});

describe('S130: limits are coded errors; memory and disk stay bounded', () => {
  it('S130: a value or key over the limit → ENGINE_PERSISTENCE_LIMIT, nothing stored (default limits)', async () => {
    const s = await provider().open('s', spec('l.store'));
    const big = 'x'.repeat(DEFAULT_PERSISTENCE_LIMITS.maxValueBytes + 1);
    expect(() => s.setItem('k', big)).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    expect(() => s.push('q', big)).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    expect(() => s.setItem('k'.repeat(257), 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    s.setItem('k', 'x'.repeat(DEFAULT_PERSISTENCE_LIMITS.maxValueBytes));
    expect(s.getItem('k')).toHaveLength(DEFAULT_PERSISTENCE_LIMITS.maxValueBytes);
    expect(s.queueSize('q')).toBe(0);
  });

  it('S130: pushes stop at the queue limit with ENGINE_PERSISTENCE_LIMIT; taking frees room', async () => {
    const s = await provider({ maxQueueItems: 1000 }).open('s', spec('q.store'));
    let failedAt = -1;
    for (let i = 0; i < 1_000_000; i++) {
      try {
        s.push('q', `item ${i}`);
      } catch (err) {
        expect(err).toMatchObject({ code: 'ENGINE_PERSISTENCE_LIMIT' });
        failedAt = i;
        break;
      }
    }
    expect(failedAt).toBe(1000);
    expect(() => s.returnItem('q', 'x')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    expect(s.take('q', 1)).toEqual(['item 0']);
    s.push('q', 'again');
    expect(s.queueSize('q')).toBe(1000);
  });

  it('S130: entry and byte limits of the store', async () => {
    const s = await provider({ maxEntries: 10, maxStoreBytes: 1_000_000 }).open('s', spec('e.store'));
    for (let i = 0; i < 10; i++) s.setItem(`k${i}`, 'v');
    expect(() => s.setItem('k10', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    s.setItem('k0', 'overwrite is fine');
    const b = await provider({ maxStoreBytes: 2000 }).open('s', spec('b.store'));
    b.setItem('a', 'x'.repeat(1500));
    expect(() => b.setItem('b', 'x'.repeat(600))).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    b.setItem('a', null);
    b.setItem('b', 'x'.repeat(600));
  });

  it('S130: the default queue limit (100 000) is reached by real pushes; the file stays bounded', async () => {
    const s = await provider().open('s', spec('big.store'));
    const n = DEFAULT_PERSISTENCE_LIMITS.maxQueueItems;
    for (let i = 0; i < n; i++) s.push('q', `item-${i}`);
    expect(() => s.push('q', 'one more')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    await s.settle(true);
    const size = statSync(join(dir, 'big.store')).size;
    for (let i = 0; i < 1000; i++)
      expect(() => s.push('q', 'more')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    await s.settle(true);
    expect(statSync(join(dir, 'big.store')).size).toBe(size);
    expect(size).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);
});
