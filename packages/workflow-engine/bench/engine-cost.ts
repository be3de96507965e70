// Per-processor-run cost of the workflow engine (ADR 0040): one script run end to end, fresh
// QuickJS context each time, on the pooled worker threads. A measurement, not a test.
//   pnpm --filter @org/workflow-engine bench
import { createWorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from '../test/fake-host.js';

const engine = await createWorkflowEngine(
  workflow([
    scriptStep('empty', ''),
    scriptStep(
      'typical',
      "context.setBody(JSON.stringify({ n: JSON.parse(context.getData()).n, b: context.getBody() })); context.setProperty('status_code', 200)",
    ),
  ]),
  { host: fakeHost(), data: { n: 1 } },
);
for (const id of ['empty', 'typical']) {
  for (let i = 0; i < 20; i++) await engine.runStep(id, input('x'));
  const n = 200;
  const t = performance.now();
  for (let i = 0; i < n; i++) await engine.runStep(id, input('x'));
  console.log(
    `${id}: ${(((performance.now() - t) * 1000) / n).toFixed(0)} µs per run (mean of ${n}; load-dependent, compare runs on one machine)`,
  );
}
engine.dispose();
