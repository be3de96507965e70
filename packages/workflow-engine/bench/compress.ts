// bytes().gzip / gunzip inside a script beside node:zlib's gzipSync / gunzipSync on the same bytes, measured in
// the same run, alternating (ADR 0075; target: the script's calls at ≥ 80% of node:zlib's rate). The script times
// its own loop with Date.now, so the ratio is the cost of a call — copying out of QuickJS, zlib in the worker,
// copying the result back — not of starting a step run. A measurement, not a test.
//   pnpm --filter @org/workflow-engine bench
import { gunzipSync, gzipSync } from 'node:zlib';
import { asAsync } from '@org/test-utils';
import { createWorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from '../test/fake-host.js';

const ROUNDS = 7;
const SCRIPT = `const b = context.bytes(); const data = context.getStream().readAll(); const n = Number(context.getProperty('n'));
let g, u; const t0 = Date.now();
for (let i = 0; i < n; i++) g = b.gzip(data);
const t1 = Date.now();
for (let i = 0; i < n; i++) u = b.gunzip(g);
const t2 = Date.now();
if (u.length !== data.length) throw new Error('round trip failed');
context.setBody(JSON.stringify([t1 - t0, t2 - t1]));`;

/** Log-like JSON lines: compressible about 5:1, like the traffic this is for. */
function payload(bytes: number): Uint8Array {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const line = `{"ts":${1_700_000_000_000 + i * 37},"level":"${i % 7 ? 'info' : 'warn'}","msg":"request ${(i * 2654435761) % 1_000_003} served","status":${200 + (i % 5)},"ms":${(i * 13) % 997}}\n`;
    lines.push(line);
    n += line.length;
  }
  return new TextEncoder().encode(lines.join('').slice(0, bytes));
}

function nodeMs(data: Uint8Array, n: number): [number, number] {
  let g: Buffer = Buffer.alloc(0);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) g = gzipSync(data);
  const t1 = performance.now();
  for (let i = 0; i < n; i++) gunzipSync(g);
  return [t1 - t0, performance.now() - t1];
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const engine = await createWorkflowEngine(workflow([scriptStep('z', SCRIPT)]), {
  host: fakeHost(),
  data: {},
  limits: { timeMs: 60_000, memoryBytes: 64 * 1024 * 1024 },
});
for (const [label, size, n] of [
  ['64 KiB', 64 * 1024, 400],
  ['1 MiB', 1024 * 1024, 40],
] as const) {
  const data = payload(size);
  const inp = () => ({ ...input(), stream: asAsync([data]), properties: { n: String(n) } });
  await engine.runStep('z', inp()); // warm the sandbox and zlib
  const ours: [number, number][] = [];
  const node: [number, number][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const res = await engine.runStep('z', inp());
    if (res.errored) throw new Error(res.errors.join('; '));
    ours.push(JSON.parse(res.body as string) as [number, number]);
    node.push(nodeMs(data, n));
  }
  for (const [i, op] of [
    [0, 'gzip'],
    [1, 'gunzip'],
  ] as const) {
    const o = median(ours.map((x) => x[i])) / n;
    const b = median(node.map((x) => x[i])) / n;
    // Each round's script and node:zlib loops ran back to back: the median of the paired ratios rides out load.
    const ratio = median(ours.map((x, r) => node[r]![i] / x[i]));
    console.log(
      `${op} ${label}: script ${(o * 1000).toFixed(0)} µs, node:zlib ${(b * 1000).toFixed(0)} µs per call, ratio ${ratio.toFixed(2)} (target ≥ 0.80; median of ${ROUNDS} paired rounds of ${n})`,
    );
  }
}
engine.dispose();
