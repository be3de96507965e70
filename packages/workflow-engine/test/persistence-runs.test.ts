// ADR 0126: each step run's writes, queue takes included, are committed by that run's settle and no other's; the
// newest write of a key wins whatever order runs commit in; a version 1 store (queue headers) is upgraded at open.
import { join } from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/index.js';
import { plainSpec as spec, StoreHarness } from './persistence-helpers.js';

const h = StoreHarness.perTest();
const provider = (limits = {}) => h.provider(limits);

/** What the file holds, read with a plain lmdb handle: the records by key (latin1) and the stats record. */
async function onDisk(
  file: string,
): Promise<{ records: Map<string, string>; stats: unknown; counted: unknown }> {
  const db = open<Buffer, Buffer>({
    path: join(h.dir, file),
    noSubdir: true,
    encoding: 'binary',
    keyEncoding: 'binary',
  });
  try {
    const records = new Map<string, string>();
    const counted = { entries: 0, bytes: 0 };
    for (const { key, value } of db.getRange({ start: Buffer.from([1]) })) {
      records.set(key.toString('latin1'), value.subarray(1).toString('utf8'));
      counted.entries++;
      counted.bytes += key.length + value.length;
    }
    const stats: unknown = JSON.parse(db.getBinary(Buffer.from([0, 1]))!.toString('utf8'));
    return { records, stats, counted };
  } finally {
    await db.close();
  }
}

/** The queue items the file holds, in order (version 2 layout: `05 len16 name seq64`). */
function queueOnDisk(records: Map<string, string>): string[] {
  return [...records.entries()].filter(([k]) => k.charCodeAt(0) === 5).map(([, v]) => v);
}

describe('each run commits its own writes (ADR 0126)', () => {
  it("a run's writes are seen by every run at once but reach the file only with its own settle", async () => {
    const s = await provider().open('s', spec('own.store'));
    const [a, b] = [s.begin!(), s.begin!()];
    a.setItem('x', 'from a');
    b.setItem('y', 'from b');
    expect([b.getItem('x'), a.getItem('y'), s.getItem('x')]).toEqual(['from a', 'from b', 'from a']);
    await b.settle(true);
    let disk = await onDisk('own.store');
    expect([...disk.records.keys()]).toEqual(['\u0001y']);
    expect(disk.stats).toEqual(disk.counted); // the counts are those of what is committed, not of a's held write
    await a.settle(true);
    disk = await onDisk('own.store');
    expect([...disk.records.keys()].sort()).toEqual(['\u0001x', '\u0001y']);
    expect(disk.stats).toEqual(disk.counted);
  });

  it("a consumer's take is not committed by a producer's settle; a run never settled leaves its take undone", async () => {
    const s = await provider().open('s', spec('queue.store'));
    const seed = s.begin!();
    for (const item of ['1', '2', '3']) seed.push('q', item);
    await seed.settle(true);
    const consumer = s.begin!();
    expect(consumer.take('q', 2)).toEqual(['1', '2']);
    const producer = s.begin!();
    producer.push('q', '4');
    expect(producer.queueSize('q')).toBe(2); // the take is seen at once: no other run gets '1' or '2'
    expect(producer.take('q', 1)).toEqual(['3']);
    await producer.settle(true);
    // The consumer never settles (as if its process were killed): its take is not in the file.
    const disk = await onDisk('queue.store');
    expect(queueOnDisk(disk.records)).toEqual(['1', '2', '4']);
    expect(disk.stats).toEqual(disk.counted);
  });

  it('the newest write of a key wins whichever run commits first; a run killed after an older one loses nothing of it', async () => {
    const s = await provider().open('s', spec('order.store'));
    const [old, newer] = [s.begin!(), s.begin!()];
    old.setItem('k', 'old');
    newer.setItem('k', 'new');
    await newer.settle(true);
    await old.settle(true); // older, committed later: not written over the newer value
    expect(s.getItem('k')).toBe('new');
    expect((await onDisk('order.store')).records.get('\u0001k')).toBe('new');

    const [first, second] = [s.begin!(), s.begin!()];
    first.setItem('j', 'first');
    second.setItem('j', 'second');
    await first.settle(true); // the newer write is still pending in `second`: the file holds `first`'s
    expect(s.getItem('j')).toBe('second');
    const disk = await onDisk('order.store');
    expect(disk.records.get('\u0001j')).toBe('first');
    expect(disk.stats).toEqual(disk.counted);
    await second.settle(true);
    expect((await onDisk('order.store')).records.get('\u0001j')).toBe('second');
  });

  it('a run holds at most maxRunEntries writes (ENGINE_PERSISTENCE_LIMIT); other runs go on; a settled run takes none', async () => {
    const s = await provider({ maxRunEntries: 3 }).open('s', spec('limit.store'));
    const a = s.begin!();
    for (const k of ['1', '2', '3']) a.setItem(k, 'v');
    expect(() => a.setItem('4', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    expect(() => a.push('q', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    const b = s.begin!();
    b.setItem('5', 'v');
    await a.settle(true);
    await b.settle(true);
    expect(() => a.setItem('6', 'v')).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_FAILED');
    expect((await onDisk('limit.store')).counted).toMatchObject({ entries: 4 });
  });

  it('a run holds at most maxRunBytes of writes', async () => {
    const s = await provider({ maxRunBytes: 100 }).open('s', spec('bytes.store'));
    const a = s.begin!();
    a.setItem('a', 'x'.repeat(90));
    expect(() => a.setItem('b', 'x'.repeat(20))).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
    await a.settle(true);
  });
});

describe('a version 1 store is upgraded at open (ADR 0126)', () => {
  it('drops the queue headers, keeps the items in order and every other record, and recounts', async () => {
    const path = join(h.dir, 'v1.store');
    const db = open<Buffer, Buffer>({ path, noSubdir: true, encoding: 'binary', keyEncoding: 'binary' });
    const item = (name: string, seq: number): Buffer => {
      const k = Buffer.alloc(3 + name.length + 8);
      k[0] = 5;
      k.writeUInt16BE(name.length, 1);
      k.write(name, 3, 'latin1');
      k.writeBigUInt64BE(BigInt(seq), 3 + name.length);
      return k;
    };
    const meta = {
      format: 'org.workflow-engine.persistence',
      version: 1,
      encrypted: false,
      obfuscated: false,
    };
    const base = 2 ** 40;
    await db.transaction(() => {
      db.putSync(Buffer.from([0, 0]), Buffer.from(JSON.stringify(meta)));
      db.putSync(Buffer.from([0, 1]), Buffer.from(JSON.stringify({ entries: 99, bytes: 99 })));
      db.putSync(Buffer.from('\u0001kept'), Buffer.from('\u0000value'));
      db.putSync(
        Buffer.from('\u0004q'),
        Buffer.from('\u0000' + JSON.stringify({ h: base - 1, t: base + 2 })),
      );
      db.putSync(item('q', base - 1), Buffer.from('\u0000returned'));
      db.putSync(item('q', base), Buffer.from('\u0000first'));
      db.putSync(item('q', base + 1), Buffer.from('\u0000second'));
    });
    await db.close();

    const s = await provider().open('s', spec('v1.store'));
    expect(s.queueSize('q')).toBe(3);
    expect(s.getItem('kept')).toBe('value');
    const r = s.begin!();
    r.push('q', 'third');
    r.returnItem('q', 'zeroth');
    expect(r.take('q', 10)).toEqual(['zeroth', 'returned', 'first', 'second', 'third']);
    await r.settle(true);
    await h.closeAll();
    const disk = await onDisk('v1.store');
    expect([...disk.records.keys()]).toEqual(['\u0001kept']);
    expect(disk.stats).toEqual(disk.counted);
    const again = open<Buffer, Buffer>({ path, noSubdir: true, encoding: 'binary', keyEncoding: 'binary' });
    expect(JSON.parse(again.getBinary(Buffer.from([0, 0]))!.toString())).toMatchObject({ version: 2 });
    await again.close();
  });
});
