import { describe, expect, it } from 'vitest';
import { createWorkflowEngine } from '../../src/engine/index.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

// Measures the per-run cost recorded in ADR 0040. Off by default (timing on a shared machine is noise);
// run with ENGINE_COST=1 pnpm exec vitest run --project agent-runtime test/engine/run-cost.
describe.runIf(process.env['ENGINE_COST'] === '1')('per-run cost', () => {
  it('measures one processor run end to end', async () => {
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
      const us = ((performance.now() - t) * 1000) / n;
      console.log(`${id}: ${us.toFixed(0)} µs per run`);
      expect(us).toBeGreaterThan(0);
    }
  });
});
