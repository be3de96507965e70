// The store's size accounting (ADR 0052 limits, ADR 0066): counts kept in memory and written with the data, the
// stored size of recently seen keys remembered, writes held until settle, and a recount after a failed commit.
import { join } from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { createWorkflowEngine, EngineError, type PersistentStore } from '../src/index.js';
import { SIZE_CACHE_KEYS } from '../src/persistence/lmdb-entries.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';
import { plainSpec as spec, StoreHarness } from './persistence-helpers.js';

const h = StoreHarness.perTest();
const provider = (limits = {}) => h.provider(limits);
const closeAll = (): Promise<void> => h.closeAll();

/** The stats record and a count of the entries as LMDB holds them, read with a plain lmdb handle. */
async function onDisk(
  file: string,
): Promise<{ stats: unknown; counted: { entries: number; bytes: number } }> {
  const db = open<Buffer, Buffer>({
    path: join(h.dir, file),
    noSubdir: true,
    encoding: 'binary',
    keyEncoding: 'binary',
  });
  try {
    const stats: unknown = JSON.parse(db.getBinary(Buffer.from([0, 1]))!.toString('utf8'));
    const counted = { entries: 0, bytes: 0 };
    for (const { key, value } of db.getRange({ start: Buffer.from([1]) })) {
      counted.entries++;
      counted.bytes += key.length + value.length;
    }
    return { stats, counted };
  } finally {
    await db.close();
  }
}

/** Fault injection at the LMDB boundary: the next hand-over's commit fails, as on a full disk. */
function failNextCommit(store: PersistentStore): void {
  const db = (store as unknown as { database: { put: (...a: unknown[]) => Promise<unknown> } }).database;
  const put = db.put.bind(db);
  let failing = true;
  db.put = (...a: unknown[]) => {
    if (!failing) return put(...a);
    queueMicrotask(() => (failing = false));
    return Promise.reject(new Error('injected: no space left on device'));
  };
}

/** Bytes an item counts for (plain store): kind byte + UTF-8 key, tag byte + UTF-8 value. */
const itemBytes = (k: string, v: string): number => 1 + Buffer.byteLength(k) + 1 + Buffer.byteLength(v);

describe('store accounting: limits at the exact boundary', () => {
  it('S130: maxEntries admits exactly N entries; overwrites and removals stay allowed and free room', async () => {
    const s = await provider({ maxEntries: 5 }).open('s', spec('n.store'));
    for (let i = 0; i < 5; i++) s.setItem(`k${i}`, 'v');
    expect(() => s.setItem('k5', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    s.setItem('k0', 'a longer value: an overwrite is not a new entry');
    s.setItem('k1', null);
    s.setItem('k5', 'v');
    expect(() => s.setItem('k6', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    await s.settle(true);
  });

  it('S130: maxStoreBytes admits a store of exactly that many bytes, not one more', async () => {
    const limit = itemBytes('a', 'x'.repeat(40)) + itemBytes('b', 'y'.repeat(50));
    const s = await provider({ maxStoreBytes: limit }).open('s', spec('b.store'));
    s.setItem('a', 'x'.repeat(40));
    expect(() => s.setItem('b', 'y'.repeat(51))).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    s.setItem('b', 'y'.repeat(50));
    expect(() => s.setItem('a', 'x'.repeat(41))).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    s.setItem('a', 'x'.repeat(39)); // shrinking is always allowed, and frees one byte
    s.setItem('b', 'y'.repeat(51));
    await s.settle(true);
    await closeAll();
    expect(await onDisk('b.store')).toEqual({
      stats: { entries: 2, bytes: limit },
      counted: { entries: 2, bytes: limit },
    });
  });

  it('S130: a batch that breaches keeps exactly the pairs before the breach, and the counts follow them', async () => {
    const s = await provider({ maxEntries: 10 }).open('s', spec('batch.store'));
    for (let i = 0; i < 8; i++) s.setItem(`old${i}`, 'v');
    const batch: [string, string | null][] = [
      ['old0', 'overwritten'],
      ['new0', 'v'],
      ['old1', null],
      ['new1', 'v'],
      ['new2', 'v'],
      ['new3', 'v'],
    ];
    expect(() => s.setItems!(batch)).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    expect([
      s.getItem('old0'),
      s.getItem('new0'),
      s.getItem('old1'),
      s.getItem('new2'),
      s.getItem('new3'),
    ]).toEqual(['overwritten', 'v', null, 'v', null]);
    expect(() => s.setItem('new3', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    await s.settle(true);
    await closeAll();
    expect(await onDisk('batch.store')).toMatchObject({ stats: { entries: 10 }, counted: { entries: 10 } });
  });
});

describe("setJoined (the write buffer's batch as one text)", () => {
  /** The joined form of `pairs`: lengths (key, value or -1) and the keys, then the values. */
  const joined = (pairs: [string, string | null][]): [Int32Array, string] => [
    Int32Array.from(pairs.flatMap(([k, v]) => [k.length, v === null ? -1 : v.length])),
    pairs.map(([k]) => k).join('') + pairs.map(([, v]) => v ?? '').join(''),
  ];
  const outcome = (f: () => void): string => {
    try {
      f();
      return 'ok';
    } catch (e) {
      return `${(e as EngineError).code}: ${(e as Error).message}`;
    }
  };
  const key = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
  const batches: [string, [string, string | null][]][] = [
    [
      'plain ASCII, nulls, an empty key, a NUL',
      [
        ['a', '1'],
        ['', 'empty'],
        ['n\u0000', 'x\u0000y'],
        ['a', null],
        ['b', ''],
      ],
    ],
    [
      'one key written, removed and written again in one batch (the last write of a key wins)',
      [
        ['a', '1'],
        ['a', '22'],
        ['a', null],
        ['b', null],
        ['a', '333'],
        ['b', '4'],
        ['b', null],
      ],
    ],
    [
      'non-ASCII text',
      [
        ['é', 'ü'],
        ['k', '😀'],
        ['lone', '\ud800'],
      ],
    ],
    [
      'a key over the limit mid-batch',
      [
        ['a', 'v'],
        ['k'.repeat(17), 'v'],
        ['c', 'v'],
      ],
    ],
    [
      'a value over the limit mid-batch',
      [
        ['a', 'v'],
        ['b', 'x'.repeat(65)],
        ['c', 'v'],
      ],
    ],
    [
      'an entry limit reached mid-batch',
      [
        ['a', 'v'],
        ['b', null],
        ['c', 'v'],
        ['d', 'v'],
        ['e', 'v'],
        ['f', 'v'],
      ],
    ],
  ];
  for (const [hexSymmetricKey, obfuscate] of [
    [undefined, false],
    [key, false],
    [key, true],
  ] as const)
    for (const [name, pairs] of batches)
      it(`stores what setItems stores (${name}; key ${hexSymmetricKey ? 'set' : 'unset'}, obfuscate ${obfuscate})`, async () => {
        const limits = { maxKeyBytes: 16, maxValueBytes: 64, maxEntries: 4 };
        const p = provider(limits);
        const [a, b] = [
          await p.open('a', { ...spec('a.store'), hexSymmetricKey, obfuscate }),
          await p.open('b', { ...spec('b.store'), hexSymmetricKey, obfuscate }),
        ];
        const [lengths, text] = joined(pairs);
        const r = outcome(() => b.setJoined!(lengths, text));
        expect(r).toBe(outcome(() => a.setItems!(pairs)));
        const keys = [...new Set(pairs.map(([k]) => k))];
        const read = (s: PersistentStore, k: string): string | null => {
          let v: string | null = null;
          const r = outcome(() => (v = s.getItem(k)));
          return r === 'ok' ? v : r;
        };
        expect(keys.map((k) => read(b, k))).toEqual(keys.map((k) => read(a, k)));
        // The counts follow the same entries: one more write breaches on both or on neither.
        expect(outcome(() => b.setItem('z', 'v'))).toBe(outcome(() => a.setItem('z', 'v')));
        await Promise.all([a.settle(true), b.settle(true)]);
        await closeAll();
        const [da, db] = [await onDisk('a.store'), await onDisk('b.store')];
        expect(db).toEqual(da);
        expect(db.stats).toEqual(db.counted);
      });
});

describe('store accounting across a restart', () => {
  it('loads the counts at open: the limit is where it was, and overwrites of keys not seen since are exact', async () => {
    const limit = 3 * itemBytes('k0', 'x'.repeat(20));
    const first = await provider({ maxStoreBytes: limit, maxEntries: 3 }).open('s', spec('r.store'));
    for (let i = 0; i < 3; i++) first.setItem(`k${i}`, 'x'.repeat(20));
    await first.settle(true);
    await closeAll();
    const s = await provider({ maxStoreBytes: limit, maxEntries: 3 }).open('s', spec('r.store'));
    expect(() => s.setItem('k3', '')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    // k1 was never read in this process: its old size comes from LMDB, so growing it by one byte breaches.
    expect(() => s.setItem('k1', 'x'.repeat(21))).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    s.setItem('k1', 'x'.repeat(10));
    s.setItem('k2', 'x'.repeat(30));
    expect(() => s.setItem('k2', 'x'.repeat(31))).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    await s.settle(true);
    await closeAll();
    const { stats, counted } = await onDisk('r.store');
    expect(stats).toEqual(counted);
    expect(counted).toEqual({ entries: 3, bytes: limit });
  });

  it('keeps the stats record equal to a count of the entries after mixed calls (items, queues, timestamps)', async () => {
    const s = await provider().open('s', spec('mix.store'));
    for (let i = 0; i < 50; i++) s.setItem(`k${i % 7}`, 'v'.repeat(i));
    for (let i = 0; i < 20; i++) s.push('q', `item ${i}`);
    s.take('q', 5);
    s.returnItem('q', 'back');
    s.setTimestamp('t', 1);
    s.delta('d', 5);
    s.setItem('k3', null);
    await s.settle(true);
    await closeAll();
    const { stats, counted } = await onDisk('mix.store');
    expect(stats).toEqual(counted);
  });
});

describe('store accounting: writes held until settle, one transaction', () => {
  it('writes are visible at once but reach LMDB only at settle, with the stats record', async () => {
    const s = await provider().open('s', spec('held.store'));
    const db = (s as unknown as { database: { getBinary(k: Buffer): Buffer | undefined } }).database;
    s.setItem('a', '1');
    s.setItem('b', '2');
    expect(s.getItem('a')).toBe('1');
    expect(db.getBinary(Buffer.from('\u0001a'))).toBeUndefined();
    await s.settle(true);
    expect(db.getBinary(Buffer.from('\u0001a'))?.toString()).toBe('\u00001');
    expect(JSON.parse(db.getBinary(Buffer.from([0, 1]))!.toString())).toMatchObject({ entries: 2 });
  });
});

describe('store accounting: the keys it remembers', () => {
  // Reads 2 × SIZE_CACHE_KEYS (131 072) absent keys from LMDB: 1.5–3 s, more on a busy machine.
  it(
    'a write not yet committed stays visible and counted while the keys it remembers turn over',
    { timeout: 30_000 },
    async () => {
      const s = await provider().open('s', spec('turnover.store'));
      s.setItem('a', 'x');
      s.commit!(); // handed over to LMDB: its commit is in flight, not landed (nothing awaited)
      s.setItem('c', 'held'); // held, not handed over
      // Other keys read before any commit lands: the generations of remembered keys turn over four times.
      for (let i = 0; i < 2 * SIZE_CACHE_KEYS + 10; i++) expect(s.getItem(`r${i}`)).toBeNull();
      expect(s.getItem('a')).toBe('x');
      expect(s.getItem('c')).toBe('held');
      s.setItem('a', 'yy');
      s.setItem('b', 'z');
      s.setItem('c', null);
      await s.settle(true);
      expect(s.getItem('a')).toBe('yy');
      expect(s.getItem('c')).toBeNull();
      await closeAll();
      const { stats, counted } = await onDisk('turnover.store');
      expect(stats).toEqual(counted);
      expect(counted).toEqual({ entries: 2, bytes: itemBytes('a', 'yy') + itemBytes('b', 'z') });
    },
  );
});

describe('store hand-over: what reaches lmdb-js', () => {
  it('a write replaced before its hand-over is not written; writes of other keys all are, in call order', async () => {
    const s = await provider().open('s', spec('replaced.store'));
    const db = (
      s as unknown as {
        database: {
          put: (k: Uint8Array, v: Uint8Array) => Promise<unknown>;
          remove: (k: Uint8Array) => Promise<unknown>;
        };
      }
    ).database;
    const [put, remove] = [db.put.bind(db), db.remove.bind(db)];
    const seen: string[] = [];
    db.put = (k, v) => {
      seen.push(Buffer.from(k).toString('latin1'));
      return put(k, v);
    };
    db.remove = (k) => {
      seen.push(`remove ${Buffer.from(k).toString('latin1')}`);
      return remove(k);
    };
    s.setItem('a', '1');
    s.setItems!([
      ['b', '2'],
      ['a', '3'],
    ]);
    s.setItem('c', '4');
    await s.settle(true);
    expect(seen).toEqual(['\u0001b', '\u0001a', '\u0001c', '\u0000\u0001']);
    expect(s.getItem('a')).toBe('3');
    // Nothing pending any more: a run of new keys is written whole, in call order.
    seen.length = 0;
    s.setItems!([
      ['d', '5'],
      ['e', '6'],
    ]);
    await s.settle(true);
    expect(seen).toEqual(['\u0001d', '\u0001e', '\u0000\u0001']);
    // A removal replaced by a write, and a write replaced by a removal: only the last of each key goes.
    seen.length = 0;
    s.setItem('d', null);
    s.setItem('d', '7');
    s.setItem('e', '8');
    s.setItem('e', null);
    await s.settle(true);
    expect(seen).toEqual(['\u0001d', 'remove \u0001e', '\u0000\u0001']);
  });
});

describe('store accounting after a failed commit', () => {
  it('rejects the settle with ENGINE_PERSISTENCE_FAILED, refuses writes until then, and recounts what is stored', async () => {
    const s = await provider({ maxEntries: 4 }).open('s', spec('f.store'));
    s.setItem('kept', 'v');
    await s.settle(true);
    failNextCommit(s);
    s.setItem('lost1', 'v');
    s.setItem('lost2', 'v');
    s.setItem('lost3', 'v');
    expect(s.getItem('lost1')).toBe('v');
    await expect(s.settle(true)).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_FAILED');
    // The lost writes are gone from the overlay and from the counts: three new entries fit again, not a fourth.
    expect(s.getItem('lost1')).toBeNull();
    for (const k of ['n1', 'n2', 'n3']) s.setItem(k, 'v');
    expect(() => s.setItem('n4', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    await s.settle(true);
    await closeAll();
    expect(await onDisk('f.store')).toMatchObject({ stats: { entries: 4 }, counted: { entries: 4 } });
  });

  it('after the recount, a lost write is not counted: removing its key without reading it first changes nothing', async () => {
    const s = await provider().open('s', spec('lost.store'));
    s.setItem('kept', 'v');
    await s.settle(true);
    failNextCommit(s);
    s.setItem('lost', 'v');
    await expect(s.settle(true)).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_FAILED');
    s.setItem('lost', null);
    s.setItem('new', 'w');
    await s.settle(true);
    await closeAll();
    const { stats, counted } = await onDisk('lost.store');
    expect(stats).toEqual(counted);
    expect(counted).toEqual({ entries: 2, bytes: itemBytes('kept', 'v') + itemBytes('new', 'w') });
  });

  it('reports the failure to every run whose writes were lost, also when another run settled first', async () => {
    const s = await provider().open('s', spec('m.store'));
    const [a, b] = [s.begin!(), s.begin!()];
    failNextCommit(s);
    a.setItem('lost', 'v');
    b.setItem('held', 'v'); // held by another run when a's commit fails: lost with it
    await expect(a.settle(true)).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_FAILED');
    expect(() => b.setItem('more', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_FAILED');
    await expect(b.settle(true)).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_FAILED');
    const c = s.begin!();
    c.setItem('fine', 'v');
    await expect(c.settle(true)).resolves.toBeUndefined();
    expect([s.getItem('lost'), s.getItem('held'), s.getItem('fine')]).toEqual([null, null, 'v']);
  });

  it('a step run whose commit fails errors with ENGINE_PERSISTENCE_FAILED; the next run stores and counts right', async () => {
    const persistence = provider({ maxEntries: 3 });
    const engine = await createWorkflowEngine(
      workflow([
        scriptStep('w', "context.setPersistedItem(context.getBody(), 'v')", { persistenceFile: 'e.store' }),
      ]),
      { host: Object.assign(fakeHost(), { persistence }), data: {} },
    );
    try {
      const store = await persistence.open('w', spec('e.store'));
      expect((await engine.runStep('w', input('a'))).errored).toBe(false);
      failNextCommit(store);
      const failed = await engine.runStep('w', input('b'));
      expect(failed.errored).toBe(true);
      expect(failed.errors.join(' ')).toContain('ENGINE_PERSISTENCE_FAILED');
      for (const k of ['c', 'd']) expect((await engine.runStep('w', input(k))).errored).toBe(false);
      const over = await engine.runStep('w', input('e'));
      expect(over.errors.join(' ')).toContain('ENGINE_PERSISTENCE_LIMIT');
      expect(store.getItem('b')).toBeNull();
    } finally {
      engine.dispose();
    }
  });
});
