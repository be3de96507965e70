// Latency from an append to a watched file to the start of the step it triggers (the step's first log line reaching
// the output), p50 and p99, beside the same step started directly (runtime.triggerStep) in the same run: the
// baseline is what any trigger pays for a step run; the rest is the watcher's. Modes: fs.watch events (default) and
// the poll alone (watchEvents false, 100 ms). A measurement, not a test.   pnpm --filter @org/workflow-runtime bench
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateBootstrap, type DeploymentRecord } from '@org/workflow-compiler';
import { Redactor } from '@org/workflow-engine';
import {
  createOutput,
  createRuntime,
  createStringDecryptor,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  hostPolicyOf,
  type FileLimits,
} from '../src/index.js';

const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 200);
const root = mkdtempSync(join(tmpdir(), 'watch-bench-'));

const workflow = {
  workflows: [
    {
      name: 'bench',
      steps: [
        {
          stepId: 'tail',
          trigger: { fileWatcher: { bootstrapFileId: 'logs', eventSplitter: '\\n', splitAtEnd: true } },
          resultsProcessor: {
            script: "console.log('start ' + JSON.parse(context.getBody())[0].message.trim());",
          },
        },
        { stepId: 'direct', resultsProcessor: { script: "console.log('start direct');" } },
      ],
    },
  ],
};

async function measure(name: string, fileLimits: Partial<FileLimits>) {
  const dir = mkdtempSync(join(root, `${name}-`));
  const file = join(dir, 'app.log');
  writeFileSync(file, '');
  const record = validateBootstrap(
    JSON.stringify([
      {
        deploymentId: 'bench',
        remoteConfiguration: 'unused',
        allowFileAccess: [{ id: 'logs', directoryOrFile: dir, READ: true }],
      },
    ]),
  )[0] as DeploymentRecord;
  let waiting: { marker: string; resolve: (t: number) => void } | undefined;
  const redactor = new Redactor();
  const output = createOutput(
    (line) => {
      if (waiting !== undefined && line.includes(`start ${waiting.marker}`))
        waiting.resolve(performance.now());
    },
    redactor,
    undefined,
    'info',
  );
  const runtime = await createRuntime({
    deployments: [{ record, workflow, policy: hostPolicyOf(record, []), source: 'test' }],
    redactor,
    output,
    decryptor: createStringDecryptor([]),
    limits: DEFAULT_LIMITS,
    timeouts: DEFAULT_TIMEOUTS,
    dataDir: dir,
    fileLimits,
  });
  runtime.startTriggers();
  const seen = (marker: string) => new Promise<number>((resolve) => (waiting = { marker, resolve }));
  const watched: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < SAMPLES + 10; i++) {
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    const marker = `m${i}`;
    const got = seen(marker);
    const t0 = performance.now();
    appendFileSync(file, `${marker}\n`);
    const t1 = await got;
    const d = seen('direct');
    const t2 = performance.now();
    await runtime.triggerStep('bench', 'direct');
    const t3 = await d;
    if (i >= 10) {
      watched.push(t1 - t0);
      direct.push(t3 - t2);
    }
  }
  await runtime.stop(1000);
  return { watched, direct };
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const ms = (x: number) => `${x.toFixed(2)} ms`;

console.log(
  `file watcher latency, append → step start, ${SAMPLES} samples each (load ${loadavg()[0]!.toFixed(2)})`,
);
for (const [name, limits] of [
  ['fs.watch events (default)', { watchEvents: true }],
  ['poll alone, 100 ms', { watchEvents: false, watchPollMs: 100 }],
] as const) {
  const { watched, direct } = await measure(name.split(' ')[0]!, limits);
  const [w50, w99, d50, d99] = [pct(watched, 0.5), pct(watched, 0.99), pct(direct, 0.5), pct(direct, 0.99)];
  console.log(
    `  ${name}: p50 ${ms(w50)}  p99 ${ms(w99)}   direct triggerStep: p50 ${ms(d50)}  p99 ${ms(d99)}   ratio p50 ${(w50 / d50).toFixed(1)}x  p99 ${(w99 / d99).toFixed(1)}x`,
  );
}
rmSync(root, { recursive: true, force: true });
process.exit(0);
