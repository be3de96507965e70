// Persisted writes per second through the engine (ADR 0052, 0066) beside bare lmdb puts of the same sizes with the
// same durability, measured in the same run: within each round engine and bare units interleave one by one (and
// which goes first alternates); the ratio is taken per round, so a load that changes skews both sides alike.
// A measurement, not a test.   pnpm --filter @org/workflow-engine bench   (BENCH_ROUNDS=n for more rounds)
//
// What each side does, per measured unit:
//   engine  one step run (runStep): the script's setPersistedItem calls go to the store (ADR 0052 write buffer),
//           the step's entries and its stats record are committed, and runStep resolves only after lmdb-js's
//           `flushed` (the fsync of the commit): persistenceFileFlush true, the default.
//   bare    the same number of puts of the same keys and values on a plain lmdb-js database with the
//           package's open options (noSubdir, binary, no compression, default overlappingSync; each key and
//           value encoded from the same JS strings the script passes, as any caller holding strings must), then
//           `await db.flushed`: the same commit and the same fsync, once per unit.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { createLmdbPersistence, createWorkflowEngine, type WorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from '../test/fake-host.js';

const VALUE = 'v'.repeat(100);
const LOOP = 2000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const dir = mkdtempSync(join(tmpdir(), 'persist-bench-'));

const loopScript = `for (let i = 0; i < ${LOOP}; i++) context.setPersistedItem('k' + i, '${VALUE}');`;
const oneScript = `context.setPersistedItem('k', '${VALUE}');`;

interface Case {
  name: string;
  /** Step runs (engine) or flushed batches (bare) per round, and writes in each. */
  units: number;
  writes: number;
  step: string;
  bare: RootDatabase<Buffer, Buffer>;
}

function bareDb(name: string): RootDatabase<Buffer, Buffer> {
  return open<Buffer, Buffer>({
    path: join(dir, name),
    noSubdir: true,
    encoding: 'binary',
    keyEncoding: 'binary',
    compression: false,
    cache: false,
  });
}

/** Milliseconds of one bare unit: `writes` puts, then the flush. */
async function bareUnit(c: Case): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < c.writes; i++) void c.bare.put(Buffer.from(`k${i}`), Buffer.from(VALUE));
  await c.bare.flushed;
  return performance.now() - t;
}

/** Milliseconds of one engine unit: one step run. */
async function engineUnit(engine: WorkflowEngine, c: Case): Promise<number> {
  const t = performance.now();
  const r = await engine.runStep(c.step, input());
  if (r.errored) throw new Error(r.errors.join('; '));
  return performance.now() - t;
}

/**
 * One round: `units` engine units and as many bare ones, interleaved one by one (and which goes first alternates),
 * so a change of the machine's load or disk within the round meets both sides alike. Writes per second of each.
 */
async function round(engine: WorkflowEngine, c: Case): Promise<{ engine: number; bare: number }> {
  let e = 0,
    b = 0;
  for (let u = 0; u < c.units; u++) {
    if (u % 2 === 0) {
      e += await engineUnit(engine, c);
      b += await bareUnit(c);
    } else {
      b += await bareUnit(c);
      e += await engineUnit(engine, c);
    }
  }
  const rate = (ms: number) => (c.units * c.writes) / (ms / 1000);
  return { engine: rate(e), bare: rate(b) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const range = (xs: number[], digits: number): string =>
  `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;

const persistence = createLmdbPersistence({ dataDir: dir });
const engine = await createWorkflowEngine(
  workflow([
    scriptStep('loop', loopScript, { persistenceFile: 'engine-loop.store' }),
    scriptStep('one', oneScript, { persistenceFile: 'engine-one.store' }),
    scriptStep('none', "context.setBody('x')"),
  ]),
  { host: Object.assign(fakeHost(), { persistence }), data: {} },
);
const cases: Case[] = [
  {
    name: `script loop (${LOOP} writes per step run)`,
    units: 10,
    writes: LOOP,
    step: 'loop',
    bare: bareDb('bare-loop'),
  },
  { name: 'one write per step run', units: 200, writes: 1, step: 'one', bare: bareDb('bare-one') },
];
for (const step of ['loop', 'one', 'none']) for (let i = 0; i < 5; i++) await engine.runStep(step, input());
for (const c of cases) for (let u = 0; u < 5; u++) await bareUnit(c);

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const loadAtStart = load();
const results = cases.map(() => ({ engine: [] as number[], bare: [] as number[], ratio: [] as number[] }));
const floor: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const [i, c] of cases.entries()) {
    const { engine: e, bare: b } = await round(engine, c);
    results[i]!.engine.push(e);
    results[i]!.bare.push(b);
    results[i]!.ratio.push(e / b);
  }
  const t = performance.now();
  for (let i = 0; i < 100; i++) await engine.runStep('none', input());
  floor.push(100 / ((performance.now() - t) / 1000));
}

// Where the time goes: the store API the sandbox's write buffer calls, without the sandbox.
const store = await persistence.open('direct', {
  file: 'direct.store',
  flush: true,
  hexSymmetricKey: undefined,
  obfuscate: false,
});
const pairs = Array.from({ length: 1000 }, (_, i): [string, string] => [`k${i}`, VALUE]);
const direct: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const t = performance.now();
  for (let b = 0; b < 10; b++) {
    store.setItems!(pairs);
    store.setItems!(pairs);
    await store.settle(true);
  }
  direct.push(20_000 / ((performance.now() - t) / 1000));
}

console.log(
  `${ROUNDS} rounds; in each, engine and bare units interleave one by one; ratio = engine / bare writes/s per round; ` +
    `load average ${loadAtStart} at the start, ${load()} at the end`,
);
for (const [i, c] of cases.entries()) {
  const r = results[i]!;
  console.log(
    `${c.name}: ratio median ${median(r.ratio).toFixed(2)} (rounds ${range(r.ratio, 2)}; target ≥ 0.50); ` +
      `engine median ${median(r.engine).toFixed(0)} writes/s, bare lmdb median ${median(r.bare).toFixed(0)} writes/s`,
  );
}
console.log(
  `store API setItems without the sandbox (2 × 1000 pairs per settle): median ${median(direct).toFixed(0)} writes/s`,
);
console.log(`step run without persistence: median ${median(floor).toFixed(0)} runs/s (the sandbox floor)`);
engine.dispose();
await persistence.close();
for (const c of cases) await c.bare.close();
rmSync(dir, { recursive: true, force: true });
