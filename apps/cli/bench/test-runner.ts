// `oapp test` on 100 small workflow tests: tests per second and the per-test overhead, beside a bare engine run of
// the same step in the same run. A benchmark, never a test.
// Run (after `pnpm -s build`): pnpm --filter @org/cli bench:test   (BENCH_TESTS, default 100; BENCH_REPS, default 3)
//
// Measured, each the median of BENCH_REPS:
//   cli      `node dist/main.js test` on the 100 tests, concurrency 1 and 2 (wall time of the process: start-up,
//            discovery, prepare, deploy, run, report)
//   runner   runTests + createInProcessDeployer in this process (no process start-up), concurrency 1
//   engine   the same step on a bare @org/workflow-engine: (a) create engine + run + dispose per test — what a
//            test needs at least; (b) one warm engine, run only.
// Overhead per test = runner per-test time − bare (a) per-test time.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWorkflowEngine, type EngineHost } from '@org/workflow-engine';
import { createInProcessDeployer, loadRunnerConfig, runTests } from '@org/workflow-test-runner';

const N = Math.max(1, Number(process.env['BENCH_TESTS'] ?? '100') || 100);
const REPS = Math.max(1, Number(process.env['BENCH_REPS'] ?? '3') || 3);
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

const STEP = {
  stepId: 'poll',
  urlGenerator: { script: "context.setUrl('api', '/status');" },
  resultsProcessor: {
    script:
      "var b = JSON.parse(context.getBody()); console.log('up ' + b.up); context.sendMetric('up', b.up);",
  },
};
const WORKFLOW = { workflows: [{ name: 'bench', steps: [STEP] }] };

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function makeProject(): string {
  const root = mkdtempSync(join(tmpdir(), 'oapp-bench-test-'));
  mkdirSync(join(root, 'tests'));
  mkdirSync(join(root, 'resources'));
  writeFileSync(join(root, 'tests', 'flow.json'), JSON.stringify(WORKFLOW));
  writeFileSync(
    join(root, 'tests', 'boot.json'),
    JSON.stringify({ allowExternalHostAccess: [{ id: 'api', host: 'http://mockserver' }] }),
  );
  for (let i = 0; i < N; i++) {
    const test = {
      fromDirectory: '',
      testThisStep: 'poll',
      useThisTestConfigFile: 'flow.json',
      useThisTestBootstrapFile: 'boot.json',
      timestampOverride: 1_700_000_000_000,
      mockEndpointResponses: [
        { whenThisIsCalled: 'http://mockserver/status', returnThisBody: `{"up": ${i}}` },
      ],
      theseMetricsShouldHaveBeenSent: [{ key: 'up', value: i }],
      theseLogsShouldHaveBeenSent: [`up ${i}`],
    };
    writeFileSync(join(root, 'tests', `t${String(i).padStart(3, '0')}.test.json`), JSON.stringify(test));
  }
  writeFileSync(
    join(root, 'testrunner.config.json'),
    JSON.stringify({ resourceDirs: ['resources'], testDirs: ['tests'] }),
  );
  return root;
}

function cli(root: string, concurrency: number): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, [MAIN, 'test', '--concurrency', String(concurrency)], {
    cwd: root,
    encoding: 'utf8',
  });
  const ms = performance.now() - t;
  const last = r.stdout.trimEnd().split('\n').at(-1);
  if (r.status !== 0 || last !== `${N} passed, 0 failed, 0 skipped`)
    throw new Error(`oapp test failed (${r.status}): ${last ?? ''}\n${r.stderr}`);
  return ms;
}

async function runner(root: string): Promise<number> {
  const config = loadRunnerConfig(join(root, 'testrunner.config.json'));
  const t = performance.now();
  const s = await runTests(config, { deploy: createInProcessDeployer() });
  const ms = performance.now() - t;
  if (s.passed !== N) throw new Error(`runner: ${s.passed} of ${N} passed`);
  return ms;
}

function host(i: number): EngineHost {
  return {
    callOutbound: () =>
      Promise.resolve({ status: 200, headers: {}, body: new TextEncoder().encode(`{"up": ${i}}`) }),
    getRestrictedData: () => Promise.resolve(''),
    registerSecret: () => undefined,
    log: () => undefined,
    metric: () => undefined,
    now: () => 1_700_000_000_000,
  };
}

const INPUT = () => ({ body: undefined, stream: undefined, headers: {}, properties: {} });

async function bareFresh(): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < N; i++) {
    const engine = await createWorkflowEngine(WORKFLOW, { host: host(i), data: {} });
    const r = await engine.runStep('poll', INPUT());
    engine.dispose();
    if (r.errored) throw new Error(r.errors.join('; '));
  }
  return performance.now() - t;
}

async function bareWarm(): Promise<number> {
  const engine = await createWorkflowEngine(WORKFLOW, { host: host(1), data: {} });
  await engine.runStep('poll', INPUT());
  const t = performance.now();
  for (let i = 0; i < N; i++) await engine.runStep('poll', INPUT());
  const ms = performance.now() - t;
  engine.dispose();
  return ms;
}

const root = makeProject();
try {
  const rows: Record<string, number[]> = { cli1: [], cli2: [], runner: [], fresh: [], warm: [] };
  for (let rep = 0; rep < REPS; rep++) {
    // Interleaved, so drifting machine load hits every measurement alike.
    rows['fresh']!.push(await bareFresh());
    rows['runner']!.push(await runner(root));
    rows['warm']!.push(await bareWarm());
    rows['cli1']!.push(cli(root, 1));
    rows['cli2']!.push(cli(root, 2));
  }
  const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)])) as Record<
    string,
    number
  >;
  const per = (k: string) => m[k]! / N;
  console.log(
    `oapp test bench: ${N} tests, median of ${REPS}; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}`,
  );
  console.log(
    `  oapp test (process), concurrency 1: ${(N / (m['cli1']! / 1000)).toFixed(1)} tests/s (${per('cli1').toFixed(1)} ms/test)`,
  );
  console.log(
    `  oapp test (process), concurrency 2: ${(N / (m['cli2']! / 1000)).toFixed(1)} tests/s (${per('cli2').toFixed(1)} ms/test)`,
  );
  console.log(
    `  runTests in process, concurrency 1: ${(N / (m['runner']! / 1000)).toFixed(1)} tests/s (${per('runner').toFixed(1)} ms/test)`,
  );
  console.log(`  bare engine, create+run+dispose:    ${per('fresh').toFixed(1)} ms/run`);
  console.log(`  bare engine, warm run only:         ${per('warm').toFixed(2)} ms/run`);
  console.log(
    `  per-test overhead vs bare create+run: ${(per('runner') - per('fresh')).toFixed(1)} ms (ratio ${(per('runner') / per('fresh')).toFixed(2)}x); vs warm run: ratio ${(per('runner') / per('warm')).toFixed(1)}x`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
