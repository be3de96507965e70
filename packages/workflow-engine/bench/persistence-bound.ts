// How far the script loop of persistence.ts could go if the store did less: the engine's step run beside the same
// step on two stand-in stores and bare lmdb, all in one process, interleaved unit by unit (the order rotates).
// A measurement, not a test.   npx tsx bench/persistence-bound.ts   (BENCH_ROUNDS=n, 200 by default)
//
//   real       the product: the loop step of persistence.ts, committed and fsynced before runStep resolves.
//   unchecked  the same step on a store that does none of the store's own work (no limits, no counts, no
//              read-your-writes overlay, no stats record): each batch of the write buffer is laid out as the real
//              store lays it out and put straight into LMDB as it arrives, so LMDB works while the script runs;
//              the step waits for `flushed` as the real one does. Not a safe store: an upper bound for any store
//              on this sandbox and this transport.
//   noop       the same step on a store that takes every batch and writes nothing: the sandbox and the transport
//              alone, the ceiling of any store.
//   bare       bare lmdb as in persistence.ts: the same puts, then `flushed`.
// CPU is the process's (all threads: sandbox worker, main, LMDB's, the collector's) per unit.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Database } from 'lmdb';
import {
  createLmdbPersistence,
  createWorkflowEngine,
  type PersistenceProvider,
  type PersistentStore,
  type WorkflowEngine,
} from '../src/index.js';
import { plainLayout } from '../src/persistence/lmdb-store.js';
import { fakeHost, input, scriptStep, workflow } from '../test/fake-host.js';

const VALUE = 'v'.repeat(100);
const LOOP = 2000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const WARM = 20;
const dir = mkdtempSync(join(tmpdir(), 'persist-bound-'));

/** The batch's storage keys and values as the real store lays them out (`plainLayout`), as views. */
function* views(lengths: Int32Array, text: string): Generator<[Uint8Array, Uint8Array | null]> {
  const { all } = plainLayout(lengths, text);
  for (let i = 0, o = all.byteOffset; i < lengths.length >> 1; i++) {
    const key = new Uint8Array(all.buffer, o, 1 + lengths[2 * i]!);
    o += key.length;
    const vl = lengths[2 * i + 1]!;
    const value = vl < 0 ? null : new Uint8Array(all.buffer, o, 1 + vl);
    o += value?.length ?? 0;
    yield [key, value];
  }
}

/** A provider whose stores are the real ones with the batch path replaced (see the header). */
function standIn(kind: 'unchecked' | 'noop', real: PersistenceProvider): PersistenceProvider {
  return {
    async open(stepId, spec) {
      const store = await real.open(stepId, spec);
      const db = (store as unknown as { database: Database<Buffer, Buffer> }).database;
      const over: Partial<PersistentStore> = {
        admitsJoined: () => true,
        setJoined:
          kind === 'noop'
            ? () => {}
            : (lengths, text) => {
                for (const [key, value] of views(lengths, text))
                  void (value === null ? db.remove(key as Buffer) : db.put(key as Buffer, value as Buffer));
              },
        commit: () => {},
        settle: async (flush) => {
          if (kind === 'unchecked' && flush) await db.flushed;
        },
      };
      return new Proxy(store, {
        get: (t, p, r) => (p in over ? over[p as keyof PersistentStore] : (Reflect.get(t, p, r) as unknown)),
      });
    },
    close: () => real.close(),
  };
}

const loopScript = `for (let i = 0; i < ${LOOP}; i++) context.setPersistedItem('k' + i, '${VALUE}');`;
const providers: PersistenceProvider[] = [];
async function engineOn(kind: 'real' | 'unchecked' | 'noop'): Promise<WorkflowEngine> {
  const real = createLmdbPersistence({ dataDir: mkdtempSync(join(dir, `${kind}-`)) });
  const persistence = kind === 'real' ? real : standIn(kind, real);
  providers.push(persistence);
  return createWorkflowEngine(workflow([scriptStep('loop', loopScript, { persistenceFile: 'loop.store' })]), {
    host: Object.assign(fakeHost(), { persistence }),
    data: {},
  });
}

const bare = open<Buffer, Buffer>({
  path: join(dir, 'bare'),
  noSubdir: true,
  encoding: 'binary',
  keyEncoding: 'binary',
  compression: false,
  cache: false,
});
const engines = {
  real: await engineOn('real'),
  unchecked: await engineOn('unchecked'),
  noop: await engineOn('noop'),
};
const units: Record<string, () => Promise<void>> = {
  bare: async () => {
    for (let i = 0; i < LOOP; i++) void bare.put(Buffer.from(`k${i}`), Buffer.from(VALUE));
    await bare.flushed;
  },
};
for (const [name, engine] of Object.entries(engines))
  units[name] = async () => {
    const r = await engine.runStep('loop', input());
    if (r.errored) throw new Error(r.errors.join('; '));
  };

const names = Object.keys(units);
const ms: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const cpu: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const loadAtStart = load();
for (let r = 0; r < WARM + ROUNDS; r++)
  for (let j = 0; j < names.length; j++) {
    const name = names[(r + j) % names.length]!;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await units[name]!();
    const took = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (r < WARM) continue;
    ms[name]!.push(took);
    cpu[name]! += (c.user + c.system) / 1000;
  }

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const quartiles = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[s.length >> 2]!.toFixed(2)}–${s[(3 * s.length) >> 2]!.toFixed(2)}`;
};
console.log(
  `${ROUNDS} rounds of ${LOOP}-write units, interleaved (the order rotates); ` +
    `load average ${loadAtStart} at the start, ${load()} at the end`,
);
const sum = (xs: number[]): number => xs.reduce((a, x) => a + x, 0);
for (const name of names) {
  const ratios = ms.bare!.map((b, i) => b / ms[name]![i]!);
  // As persistence.ts takes it: writes per second over blocks of 10 rounds (total time), the median block.
  const blocks: number[] = [];
  for (let i = 0; i + 10 <= ROUNDS; i += 10)
    blocks.push(sum(ms.bare!.slice(i, i + 10)) / sum(ms[name]!.slice(i, i + 10)));
  console.log(
    `${name.padEnd(9)} median ${median(ms[name]!).toFixed(2)} ms, mean ${(sum(ms[name]!) / ROUNDS).toFixed(2)} ms, ` +
      `CPU ${(cpu[name]! / ROUNDS).toFixed(2)} ms` +
      (name === 'bare'
        ? ''
        : `; writes/s ratio ${median(blocks).toFixed(2)} (blocks of 10 rounds ${Math.min(...blocks).toFixed(2)}–` +
          `${Math.max(...blocks).toFixed(2)}); per unit ${median(ratios).toFixed(2)} (quartiles ${quartiles(ratios)})`),
  );
}
for (const engine of Object.values(engines)) engine.dispose();
for (const p of providers) await p.close();
await bare.close();
rmSync(dir, { recursive: true, force: true });
