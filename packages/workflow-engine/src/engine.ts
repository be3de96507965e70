import { randomUUID } from 'node:crypto';
import { EngineError } from './errors.js';
import { SecretSet } from './redact.js';
import { errorText, type EngineShared, type Limits } from './run-context.js';
import { openStores } from './persist-ops.js';
import { runStepFlow } from './step-runner.js';
import type { EngineOptions, StepInfo, StepInput, StepResult, WorkflowEngine } from './types.js';
import { loadWorkflow, type StepModel } from './workflow-model.js';

/** Defaults for {@link EngineOptions.limits} (per processor run). */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  memoryBytes: 32 * 1024 * 1024,
  timeMs: 5000,
  maxStackBytes: 512 * 1024,
});

/** Upper bounds an app may configure. */
const MAX_LIMITS: Readonly<Limits> = Object.freeze({
  memoryBytes: 1024 * 1024 * 1024,
  timeMs: 10 * 60 * 1000,
  maxStackBytes: 8 * 1024 * 1024,
});

/** Step types this engine runs; `scripted-split-aggregate` and `httpFile` are refused with ENGINE_UNSUPPORTED. */
const RUNNABLE_TYPES = new Set(['scripted', 'scripted-auth']);

/** Most `sendToStepAndForget` runs in flight per engine. */
export const MAX_FORGOTTEN_RUNS = 64;

function limitsOf(options: EngineOptions): Limits {
  const out = { ...DEFAULT_LIMITS };
  for (const k of Object.keys(out) as (keyof Limits)[]) {
    const v = options.limits?.[k];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v <= 0 || v > MAX_LIMITS[k]) {
      throw new RangeError(`limits.${k} must be a positive integer up to ${MAX_LIMITS[k]}, got ${String(v)}`);
    }
    out[k] = v;
  }
  return out;
}

/** What a concurrent run of a `singleThreaded: "return"` step gets: nothing ran (property `engine.skipped`). */
function skippedResult(): StepResult {
  return {
    status: undefined,
    body: undefined,
    headers: {},
    properties: { 'engine.skipped': 'singleThreaded' },
    errored: false,
    errors: [],
  };
}

class Engine implements WorkflowEngine {
  readonly steps: readonly StepInfo[];
  private disposed = false;
  private forgotten = 0;
  /** `singleThreaded: "return"` steps with a run in progress. */
  private readonly running = new Set<string>();
  private readonly shared: EngineShared;

  constructor(
    private readonly models: Map<string, StepModel>,
    options: EngineOptions,
  ) {
    this.steps = Object.freeze(
      [...models.values()].map((m) => Object.freeze({ stepId: m.stepId, trigger: m.trigger })),
    );
    const host = options.host;
    this.shared = {
      realm: randomUUID(),
      host,
      secrets: new SecretSet((v) => host.registerSecret(v)),
      limits: limitsOf(options),
      stepProps: new Map(),
      authProps: new Map(),
      counters: new Map(),
      deltas: new Map(),
      stores: new Map(),
      restricted: new Map(),
      runNested: (id, input, depth) => this.runNested(id, input, depth, true),
      forget: (id, input, depth) => this.forget(id, input, depth),
    };
    for (const m of models.values()) {
      const key = m.persistence?.hexSymmetricKey;
      if (key !== undefined)
        for (const k of [key, key.toLowerCase(), key.toUpperCase()]) this.shared.secrets.add(k);
    }
  }

  /** Opens the step stores through the host (persist-ops.ts). */
  async openStores(): Promise<void> {
    this.shared.stores = await openStores(this.models.values(), this.shared.host);
  }

  runStep(stepId: string, input: StepInput): Promise<StepResult> {
    return this.run(stepId, input, 0, false);
  }

  dispose(): void {
    this.disposed = true;
    this.shared.stepProps.clear();
    this.shared.authProps.clear();
  }

  private async run(stepId: string, input: StepInput, depth: number, nested: boolean): Promise<StepResult> {
    if (this.disposed) throw new EngineError('ENGINE_DISPOSED', 'the workflow engine was disposed');
    const model = this.models.get(stepId);
    if (!model)
      throw new EngineError(
        'ENGINE_STEP_NOT_FOUND',
        `no enabled step ${JSON.stringify(stepId.slice(0, 200))}`,
      );
    if (!RUNNABLE_TYPES.has(model.type)) {
      throw new EngineError(
        'ENGINE_UNSUPPORTED',
        `step type ${JSON.stringify(model.type)} is not supported by this agent`,
      );
    }
    if (!model.singleThreaded) return runStepFlow(this.shared, model, input, depth, nested);
    if (this.running.has(stepId)) return skippedResult();
    this.running.add(stepId);
    try {
      return await runStepFlow(this.shared, model, input, depth, nested);
    } finally {
      this.running.delete(stepId);
    }
  }

  /**
   * A callee's failure, whatever it is, becomes an errored result for the caller. `nested` runs (sendToStep) may
   * add sandbox workers because their caller holds one; forgotten runs queue like top-level runs.
   */
  private async runNested(
    stepId: string,
    input: StepInput,
    depth: number,
    nested: boolean,
  ): Promise<StepResult> {
    try {
      return await this.run(stepId, input, depth, nested);
    } catch (err) {
      const message = this.shared.secrets.scrub(errorText(err));
      return {
        status: undefined,
        body: undefined,
        headers: {},
        properties: {},
        errored: true,
        errors: [message],
      };
    }
  }

  private forget(stepId: string, input: StepInput, depth: number): void {
    if (!this.models.has(stepId))
      throw new EngineError(
        'ENGINE_STEP_NOT_FOUND',
        `no enabled step ${JSON.stringify(stepId.slice(0, 200))}`,
      );
    if (this.forgotten >= MAX_FORGOTTEN_RUNS) {
      throw new EngineError(
        'ENGINE_LIMIT',
        `more than ${MAX_FORGOTTEN_RUNS} sendToStepAndForget runs in flight`,
      );
    }
    this.forgotten++;
    void this.runNested(stepId, input, depth, false)
      .then((r) => {
        if (!r.errored) return;
        this.shared.host.log({ level: 'error', message: r.errors.join('; '), stepId, source: 'engine' });
      })
      .finally(() => this.forgotten--);
  }
}

/**
 * Loads a compiled workflow file (`@org/workflow-compiler` output) and returns an engine for its enabled steps.
 *
 * @throws EngineError `ENGINE_INVALID_WORKFLOW` (as a rejected promise) when the value is not a compiled
 *   workflow file; RangeError for out-of-range limits; the persistence codes (`ENGINE_PERSISTENCE_*`) when a
 *   step's store cannot be opened.
 */
export async function createWorkflowEngine(
  compiledWorkflow: unknown,
  options: EngineOptions,
): Promise<WorkflowEngine> {
  const engine = new Engine(loadWorkflow(compiledWorkflow, options.data ?? {}), options);
  await engine.openStores();
  return engine;
}
