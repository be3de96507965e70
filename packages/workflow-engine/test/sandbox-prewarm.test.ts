// prewarmSandbox (ADR 0149): one worker started ahead of the first run, on real worker threads. The pool is
// process-wide and this file has its own process, so it starts with no worker; every test leaves none behind.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type * as WorkerThreads from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_SANDBOX_IDLE_MS,
  EngineError,
  MAX_POOLED_WORKERS,
  prewarmSandbox,
  sandboxWorkersStarted,
  setSandboxIdleMs,
  setSandboxWorkers,
} from '../src/index.js';
import { input } from './fake-host.js';
import { PIN_16_MIB, PIN_LIMITS, engineFor } from './sandbox-helpers.js';

/** The worker threads the engine constructs (real ones), how many said ready or ended, and a failure on demand. */
const threads = vi.hoisted(() => ({ made: 0, ready: 0, ended: 0, failNext: false }));

vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof WorkerThreads>();
  class CountedWorker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      if (threads.failNext) {
        threads.failNext = false;
        throw new Error('no thread for this test');
      }
      super(...args);
      threads.made++;
      this.once('message', () => threads.ready++);
      this.once('exit', () => threads.ended++);
    }
  }
  return { ...real, Worker: CountedWorker };
});

/** Polled, never timed: waits until `done()` holds (at most about 15 s, then the test fails on its own check). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
}

/** A script that allocates `mib` MiB in 1 MiB pieces; its body is the count. */
const alloc = (mib: number): string =>
  `const a = []; for (let i = 0; i < ${mib}; i++) a.push(new Uint8Array(1024 * 1024)); context.setBody(String(a.length))`;

/** Runs a step on a new engine; then, when given, checks how many worker threads were made in all. */
async function ok(made?: number): Promise<void> {
  const engine = await engineFor({ s: "context.setBody('ok')" });
  expect((await engine.runStep('s', input())).body).toBe('ok');
  if (made !== undefined) expect(threads.made).toBe(made);
}

afterEach(async () => {
  setSandboxWorkers(MAX_POOLED_WORKERS);
  // Ends every idle worker (a shorter idle time applies to those idle now), then back to the default.
  setSandboxIdleMs(1);
  await until(() => sandboxWorkersStarted() === 0 && threads.ended === threads.made);
  setSandboxIdleMs(DEFAULT_SANDBOX_IDLE_MS);
  expect(sandboxWorkersStarted()).toBe(0);
  threads.made = threads.ready = threads.ended = 0;
  threads.failNext = false;
});

// Every test may take over 1 s (a worker thread starts): the timeout is the suite's.
describe('prewarmSandbox', { timeout: 30_000 }, () => {
  it('starts one worker, which the first run then uses', async () => {
    prewarmSandbox();
    expect(sandboxWorkersStarted()).toBe(1);
    await until(() => threads.ready === 1);
    expect(threads.made).toBe(1);
    await ok(1);
    expect(sandboxWorkersStarted()).toBe(1);
  });

  it('gives the worker still starting to the first run, which waits for it', async () => {
    prewarmSandbox();
    await ok(1);
    // A second run finds it idle.
    await ok(1);
  });

  it('starts nothing twice: not while one starts, nor when a worker is there', async () => {
    prewarmSandbox();
    prewarmSandbox();
    expect(sandboxWorkersStarted()).toBe(1);
    await until(() => threads.ready === 1);
    prewarmSandbox();
    expect(sandboxWorkersStarted()).toBe(1);
    await ok();
    prewarmSandbox();
    expect(sandboxWorkersStarted()).toBe(1);
    expect(threads.made).toBe(1);
  });

  it('keeps the bound on workers: with one, concurrent runs share the early worker', async () => {
    setSandboxWorkers(1);
    prewarmSandbox();
    const engine = await engineFor({ s: "context.sleep(5); context.setBody('ok')" });
    const bodies = await Promise.all(
      Array.from({ length: 4 }, async () => (await engine.runStep('s', input())).body),
    );
    expect(bodies).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(threads.made).toBe(1);
  });

  it('ends an unused early worker after the idle time, also one set after it started', async () => {
    prewarmSandbox();
    await until(() => threads.ready === 1);
    setSandboxIdleMs(50);
    await until(() => sandboxWorkersStarted() === 0);
    expect(sandboxWorkersStarted()).toBe(0);
    await until(() => threads.ended === 1);
    expect(threads.ended).toBe(1);
    // The next run starts a worker as usual.
    await ok(2);
  });

  it('gives the sandbox it set up to one engine only: another engine on the same worker has its own', async () => {
    // One worker, so both engines run on the early one; default limits, so the first engine takes its sandbox.
    setSandboxWorkers(1);
    prewarmSandbox();
    const first = await engineFor({ stamp: PIN_16_MIB });
    const other = await engineFor({ big: alloc(36) });
    expect((await first.runStep('stamp', input())).body).toBe('pinned');
    // 36 MiB fits a fresh sandbox for the default 32 MiB limit (its wasm memory is 16 MiB + the limit), not one
    // where 16 MiB are pinned.
    expect((await other.runStep('big', input())).body).toBe('36');
    expect(threads.made).toBe(1);
  });

  it('runs a first engine with another memory limit under that limit', async () => {
    prewarmSandbox();
    await until(() => threads.ready === 1);
    // 36 MiB fits the wasm memory of a sandbox for the default 32 MiB limit (16 MiB + the limit), not one for 24 MiB.
    const engine = await engineFor({ small: alloc(8), large: alloc(36) }, PIN_LIMITS);
    // Its first run first: a sandbox of the wrong limit would be replaced at the second.
    await expect(engine.runStep('large', input())).toThrowCode(EngineError, 'ENGINE_MEMORY');
    expect((await engine.runStep('small', input())).body).toBe('8');
    expect(threads.made).toBe(1);
  });

  it('forgets a failure: nothing thrown or rejected, and the first run starts a worker', async () => {
    threads.failNext = true;
    expect(() => prewarmSandbox()).not.toThrow();
    await until(() => sandboxWorkersStarted() === 0);
    expect(sandboxWorkersStarted()).toBe(0);
    expect(threads.made).toBe(0);
    await ok(1);
  });

  it('forgets a failure the first run was waiting for: that run starts its own worker', async () => {
    threads.failNext = true;
    prewarmSandbox();
    await ok(1);
    expect(sandboxWorkersStarted()).toBe(1);
  });

  it('does not keep the process alive: a program that only prewarms exits at once, with status 0', () => {
    const entry = fileURLToPath(new URL('../src/prewarm.ts', import.meta.url));
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `(await import(${JSON.stringify(entry)})).prewarmSandbox()`,
      ],
      { encoding: 'utf8', timeout: 25_000 },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('');
    expect(child.status).toBe(0);
  });
});
