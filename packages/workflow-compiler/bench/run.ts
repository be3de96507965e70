// Benchmark: compile + hash of a generated ~1 MB workflow with 200 resource references, beside plain
// JSON.parse + JSON.stringify of the same bytes. Run: pnpm --filter @org/workflow-compiler bench
// Never part of CI. Prints one JSON line at the end for scripts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileWorkflow, hashWorkflow } from '../src/index.js';

const TARGET_BYTES = 1_000_000;
const RESOURCES = 200;
const ITERATIONS = Number(process.env['ITERATIONS'] ?? 30);

function resourceText(i: number): string {
  return `// resource ${i}\nconst body = JSON.parse(context.getBody());\nbody.seen${i} = ${i};\ncontext.setBody(JSON.stringify(body));\n`.repeat(
    8,
  );
}

function setup(root: string): { dirs: string[]; bytes: Uint8Array } {
  const dirs = [join(root, 'community'), join(root, 'local1'), join(root, 'local2')];
  for (let i = 0; i < RESOURCES; i++) {
    const dir = join(dirs[i % 2 === 0 ? 0 : 2]!, `group-${i % 10}`, `sub-${i % 3}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `r${i}.js`), resourceText(i));
  }
  const steps: unknown[] = [];
  let size = 0;
  for (let i = 0; size < TARGET_BYTES; i++) {
    const r = i % RESOURCES;
    const step = {
      stepId: `step-${i}`,
      comment: `step ${i} of the generated benchmark workflow`,
      data: {
        index: i,
        label: `label-${i}`,
        weights: [1.5, 2.25, i],
        nested: { on: i % 2 === 0, note: 'x'.repeat(40) },
      },
      trigger:
        i % 3 === 0
          ? { http: { server: 'api', method: 'POST', path: `/in/${i}`, multiPartUploadByteLimit: 1048576 } }
          : { timer: { period: 60000 + i } },
      resultsProcessor: {
        processors: [
          ...(i < RESOURCES ? [{ resource: `/group-${r % 10}/sub-${r % 3}/r${r}.js` }] : []),
          {
            script: `context.diagnosticLog('step ${i}: ' + context.getBody().length); // ${'pad '.repeat(200)}`,
            data: { k: `v${i}` },
          },
        ],
      },
    };
    size += JSON.stringify(step, null, 1).length; // the file is written with one-space indentation
    steps.push(step);
  }
  const render = (): string =>
    JSON.stringify(
      { comment: 'benchmark', data: { app: 'bench' }, workflows: [{ name: 'bench', steps }] },
      null,
      1,
    );
  let text = render();
  // Nesting indentation makes the file larger than the per-step estimate: trim steps to about TARGET_BYTES.
  while (text.length > TARGET_BYTES * 1.01 && steps.length > RESOURCES) {
    const perStep = text.length / steps.length;
    steps.length = Math.max(RESOURCES, steps.length - Math.ceil((text.length - TARGET_BYTES) / perStep));
    text = render();
  }
  return { dirs, bytes: new TextEncoder().encode(text) };
}

/** CPU time (user + system) of this process in seconds. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Median CPU seconds of each contender, filled by {@link timeBoth}. */
const cpuMedians: [number, number] = [0, 0];

/**
 * Runs both contenders alternately (the machine may be shared: interleaving exposes both to the same load) and
 * returns the median seconds of each. Also records the median CPU time of each in {@link cpuMedians}: on a loaded
 * machine elapsed time says how much of a core the process got, CPU time what the work costs.
 */
async function timeBoth(a: () => Promise<void>, b: () => void): Promise<[number, number]> {
  for (let i = 0; i < 3; i++) {
    await a();
    b();
  }
  const sa: number[] = [];
  const sb: number[] = [];
  const ca: number[] = [];
  const cb: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    let c0 = cpuSeconds();
    let t0 = process.hrtime.bigint();
    await a();
    sa.push(Number(process.hrtime.bigint() - t0) / 1e9);
    ca.push(cpuSeconds() - c0);
    c0 = cpuSeconds();
    t0 = process.hrtime.bigint();
    b();
    sb.push(Number(process.hrtime.bigint() - t0) / 1e9);
    cb.push(cpuSeconds() - c0);
  }
  const median = (xs: number[]): number => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  cpuMedians[0] = median(ca);
  cpuMedians[1] = median(cb);
  return [median(sa), median(sb)];
}

/** The machine's load average (1, 5, 15 min): the machine is shared, and the ratio is read with it. */
function load(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

async function main(): Promise<void> {
  const loadBefore = load();
  const root = mkdtempSync(join(tmpdir(), 'workflow-compiler-bench-'));
  try {
    const { dirs, bytes } = setup(root);
    const mb = bytes.byteLength / 1e6;
    let hash = '';
    let refs = 0;
    const decoder = new TextDecoder();
    let out = '';
    const [ours, baseline] = await timeBoth(
      async () => {
        const { workflow, resources } = await compileWorkflow(bytes, { resourceDirs: dirs });
        hash = hashWorkflow(workflow);
        refs = resources.reduce((n, r) => n + r.references, 0);
      },
      () => {
        out = JSON.stringify(JSON.parse(decoder.decode(bytes)));
      },
    );
    const result = {
      inputBytes: bytes.byteLength,
      resourceReferences: refs,
      iterations: ITERATIONS,
      oursMs: +(ours * 1000).toFixed(2),
      oursMBps: +(mb / ours).toFixed(1),
      baselineMs: +(baseline * 1000).toFixed(2),
      baselineMBps: +(mb / baseline).toFixed(1),
      ratio: +(ours / baseline).toFixed(2),
      oursCpuMs: +(cpuMedians[0] * 1000).toFixed(2),
      baselineCpuMs: +(cpuMedians[1] * 1000).toFixed(2),
      cpuRatio: +(cpuMedians[0] / cpuMedians[1]).toFixed(2),
      loadBefore,
      loadAfter: load(),
    };
    console.log(
      `input ${result.inputBytes} bytes, ${refs} resource references, median of ${ITERATIONS} runs`,
    );
    console.log(
      `compile + hash          ${result.oursMBps} MB/s (${result.oursMs} ms)  hash ${hash.slice(0, 16)}…`,
    );
    console.log(
      `JSON.parse + stringify  ${result.baselineMBps} MB/s (${result.baselineMs} ms)  (${out.length} chars)`,
    );
    console.log(`ratio ${result.ratio}× (issue 3: ≤ 4×; issue 14: ≤ 2×)`);
    console.log(
      `CPU time: compile + hash ${result.oursCpuMs} ms, baseline ${result.baselineCpuMs} ms, ratio ${result.cpuRatio}×`,
    );
    console.log(`load average (1, 5, 15 min) before ${loadBefore}, after ${result.loadAfter}`);
    console.log(JSON.stringify(result));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
