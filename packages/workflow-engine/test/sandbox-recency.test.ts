// The sandboxes a worker keeps (src/sandbox/worker.ts, ADR 0042): at most four, the least recently used goes.
// In a file of its own: the pool must start with no worker, so that one worker serves every run.
import { describe, expect, it } from 'vitest';
import { MAX_POOLED_WORKERS, sandboxWorkersStarted, setSandboxWorkers } from '../src/index.js';
import { input } from './fake-host.js';
import { ALLOC_24_MIB, PIN_16_MIB, PIN_LIMITS, engineFor } from './sandbox-helpers.js';

describe('sandboxes kept by a worker', () => {
  it('keeps the four most recently used sandboxes of a worker, by use, not by when they were made', async () => {
    // A sandbox that still holds 16 MiB pinned fails the 24 MiB run; a new one (after eviction) runs it.
    const [limits, stamp, big] = [PIN_LIMITS, PIN_16_MIB, ALLOC_24_MIB];
    const others = await Promise.all(
      [1, 2, 3, 4].map(() => engineFor({ s: "context.setBody('x')" }, limits)),
    );
    const runOther = async (i: number) => expect((await others[i]!.runStep('s', input())).body).toBe('x');
    // One worker (this file runs in its own module instance, before any worker started), so every run below meets
    // the same sandboxes.
    expect(sandboxWorkersStarted()).toBe(0);
    setSandboxWorkers(1);
    try {
      // Used again after three others came: the fifth engine evicts the least recently used (others[0]), not it.
      const kept = await engineFor({ stamp, idle: "context.setBody('idle')", big }, limits);
      expect((await kept.runStep('stamp', input())).body).toBe('pinned');
      for (const i of [0, 1, 2]) await runOther(i);
      expect((await kept.runStep('idle', input())).body).toBe('idle');
      await runOther(3);
      await expect(kept.runStep('big', input())).rejects.toMatchObject({ code: 'ENGINE_MEMORY' });

      // Not used while four others run: evicted, so its next run gets a new sandbox.
      const evicted = await engineFor({ stamp, big }, limits);
      expect((await evicted.runStep('stamp', input())).body).toBe('pinned');
      for (const i of [0, 1, 2, 3]) await runOther(i);
      expect((await evicted.runStep('big', input())).body).toBe('24');
      expect(sandboxWorkersStarted()).toBe(1);
    } finally {
      setSandboxWorkers(MAX_POOLED_WORKERS);
    }
  });
});
