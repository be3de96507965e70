// Persisted writes per second through the engine (ADR 0052) beside bare lmdb puts of the same sizes with the
// same sync settings (default lmdb-js: overlappingSync, durable at `flushed`), measured in the same run.
// A measurement, not a test.   pnpm --filter @org/workflow-engine bench
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { createLmdbPersistence, createWorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from '../test/fake-host.js';

const VALUE = 'v'.repeat(100);
const LOOP = 2000;
const RUNS = 100;
const dir = mkdtempSync(join(tmpdir(), 'persist-bench-'));

/** Bare lmdb: `n` puts (one storage key per put, 100-byte values), then wait for the flush, `batches` times. */
async function bare(name: string, batches: number, n: number): Promise<number> {
  const db = open({ path: join(dir, name), noSubdir: true, encoding: 'binary', keyEncoding: 'binary' });
  const value = Buffer.from(VALUE);
  const t = performance.now();
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < n; i++) void db.put(Buffer.from(`k${i}`), value);
    await db.flushed;
  }
  const perSec = (batches * n) / ((performance.now() - t) / 1000);
  await db.close();
  return perSec;
}

async function engineRate(script: string, runs: number, writesPerRun: number): Promise<number> {
  const persistence = createLmdbPersistence({ dataDir: dir });
  const host = Object.assign(fakeHost(), { persistence });
  const file = `engine-${writesPerRun}.store`;
  const engine = await createWorkflowEngine(workflow([scriptStep('w', script, { persistenceFile: file })]), {
    host,
    data: {},
  });
  for (let i = 0; i < 5; i++) await engine.runStep('w', input()); // warm the sandbox
  const t = performance.now();
  for (let i = 0; i < runs; i++) {
    const r = await engine.runStep('w', input());
    if (r.errored) throw new Error(r.errors.join('; '));
  }
  const perSec = (runs * writesPerRun) / ((performance.now() - t) / 1000);
  engine.dispose();
  await persistence.close();
  return perSec;
}

const loopScript = `for (let i = 0; i < ${LOOP}; i++) context.setPersistedItem('k' + i, '${VALUE}');`;
const oneScript = `context.setPersistedItem('k', '${VALUE}');`;

const rows: [string, number, number][] = [];
rows.push([
  'script loop (2000 writes per step run)',
  await engineRate(loopScript, 5, LOOP),
  await bare('bare-loop.store', 5, LOOP),
]);
rows.push([
  'one write per step run',
  await engineRate(oneScript, RUNS, 1),
  await bare('bare-one.store', RUNS, 1),
]);
// Where the time goes: the same loop on the store API without the sandbox, and a step run that writes nothing.
const direct = createLmdbPersistence({ dataDir: dir });
const store = await direct.open('direct', {
  file: 'direct.store',
  flush: true,
  hexSymmetricKey: undefined,
  obfuscate: false,
});
const td = performance.now();
for (let b = 0; b < 5; b++) {
  for (let i = 0; i < LOOP; i++) store.setItem(`k${i}`, VALUE);
  await store.settle(true);
}
rows.push([
  'store API, no sandbox (2000 writes per settle)',
  (5 * LOOP) / ((performance.now() - td) / 1000),
  await bare('bare-direct.store', 5, LOOP),
]);
await direct.close();
const plain = await createWorkflowEngine(workflow([scriptStep('n', "context.setBody('x')")]), {
  host: fakeHost(),
  data: {},
});
for (let i = 0; i < 5; i++) await plain.runStep('n', input());
const tp = performance.now();
for (let i = 0; i < RUNS; i++) await plain.runStep('n', input());
console.log(
  `step run without persistence: ${(RUNS / ((performance.now() - tp) / 1000)).toFixed(0)} runs/s (the sandbox floor)`,
);
plain.dispose();
for (const [name, engine, baseline] of rows) {
  console.log(
    `${name}: engine ${engine.toFixed(0)} writes/s, bare lmdb ${baseline.toFixed(0)} writes/s, ratio ${(engine / baseline).toFixed(2)} (target ≥ 0.50)`,
  );
}
rmSync(dir, { recursive: true, force: true });
