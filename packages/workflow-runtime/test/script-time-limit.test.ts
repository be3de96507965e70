import { MAX_SCRIPT_TIMEOUT_MS } from '@org/workflow-compiler';
import { MAX_LIMITS } from '@org/workflow-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS } from '../src/index.js';
import { DELIBERATE_DIFFERENCES } from '../src/internal.js';
import { closeRuntimes, startRuntime, step, wf } from './helpers.js';

afterEach(closeRuntimes);

/** Computes for `ms` of wall time (as the reference's security test does for 5 000 ms), then sends a metric. */
const busy = (ms: number) =>
  wf(
    step(
      'spin',
      `const t = Date.now(); while (Date.now() - t < ${ms}) {} context.sendMetric('finished', 1);`,
    ),
  );

describe('scriptTimeoutMs: the time limit of one processor run, per deployment (issue 28)', () => {
  it("the record's value wins over the runtime's AGENT_SCRIPT_TIME_MS, up or down; without one the runtime's applies", async () => {
    const t = await startRuntime(
      [
        { id: 'lower', workflow: busy(160), record: { scriptTimeoutMs: 40 } },
        { id: 'higher', workflow: busy(300), record: { scriptTimeoutMs: 800 } },
        { id: 'default', workflow: busy(300) },
      ],
      { timeouts: { ...DEFAULT_TIMEOUTS, scriptMs: 150 } },
    );
    for (const id of ['lower', 'higher', 'default']) await t.runtime.triggerStep(id, 'spin');
    const timedOut = t
      .lines()
      .filter((l) => l['code'] === 'ENGINE_TIMEOUT')
      .map((l) => l['deploymentId']);
    expect(timedOut.sort()).toEqual(['default', 'lower']);
    expect([t.metrics('lower'), t.metrics('higher'), t.metrics('default')]).toEqual([[], ['finished'], []]);
    // About 2 s: three real engines and one sandbox worker start (~1.3 s) plus ~0.5 s of deliberate computing, with
    // margins of 2× or more between each loop and its limit so a busy machine cannot flip an outcome.
  }, 10_000);

  it('allows what the engine allows, and says the limit is a deliberate difference the bootstrap switches', () => {
    expect(MAX_SCRIPT_TIMEOUT_MS).toBe(MAX_LIMITS.timeMs);
    expect(DELIBERATE_DIFFERENCES.find((d) => d.id === 'script-time-limit')?.detail).toContain(
      'scriptTimeoutMs',
    );
  });
});
