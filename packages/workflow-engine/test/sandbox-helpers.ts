// Helpers of the sandbox tests (sandbox.test.ts, sandbox-recency.test.ts).
import { createWorkflowEngine } from '../src/index.js';
import type { EngineOptions, WorkflowEngine } from '../src/index.js';
import { fakeHost, scriptStep, workflow } from './fake-host.js';

/** An engine whose steps are the given scripts, by step id. */
export async function engineFor(
  scripts: Record<string, string>,
  limits?: EngineOptions['limits'],
): Promise<WorkflowEngine> {
  const steps = Object.entries(scripts).map(([id, s]) => scriptStep(id, s));
  return createWorkflowEngine(workflow(steps), { host: fakeHost(), data: {}, limits });
}

/** The run memory limit of {@link PIN_16_MIB} and {@link ALLOC_24_MIB}. */
export const PIN_LIMITS = { memoryBytes: 24 * 1024 * 1024 };

/** Pins 16 MiB in its sandbox where the audit cannot see it (private fields stamped on frozen built-ins). */
export const PIN_16_MIB = `class Base { constructor(o) { return o; } }
  class Stamp extends Base { #pin = new Uint8Array(4 * 1024 * 1024).fill(1); }
  for (const o of [Object.prototype, Array.prototype, Function.prototype, JSON]) new Stamp(o);
  context.setBody('pinned');`;

/**
 * 24 MiB in 1 MiB pieces: fits a sandbox under {@link PIN_LIMITS} (its fixed memory is 16 MiB + the limit), but not
 * beside 16 MiB pinned by {@link PIN_16_MIB}. Its body is `24`.
 */
export const ALLOC_24_MIB =
  'const a = []; for (let i = 0; i < 24; i++) a.push(new Uint8Array(1024 * 1024)); context.setBody(String(a.length))';
