import { randomUUID } from 'node:crypto';
import { EngineError } from './errors.js';
import { Redactor, SecretSet } from './redact.js';
import { HOST_SERVED_TYPES } from './host-served.js';
import { errorText, type EngineShared, type Limits } from './run-context.js';
import { stepInfoOf } from './list-steps.js';
import { openStores } from './persist-ops.js';
import { dropKeys } from './crypto-ops.js';
import { runStepFlow } from './step-runner.js';
import { MAX_SEND_DEPTH } from './send-ops.js';
import type {
  EngineOptions,
  RunStepOptions,
  StepInfo,
  StepInput,
  StepRef,
  StepResult,
  WorkflowEngine,
} from './types.js';
import { loadWorkflow, type StepModel } from './workflow-model.js';
import { DEFAULT_RUN_MEMORY_BYTES } from './sandbox.js';

/**
 * Defaults for {@link EngineOptions.limits}: per processor run, and `splitTimeMs` per run of a split-aggregate
 * step. Ten minutes is twenty times a call that uses a 30 s timeout in full, and enough for 10 000 items of a
 * 0.2 s cycle four at a time (ADR 0069).
 */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  memoryBytes: DEFAULT_RUN_MEMORY_BYTES,
  timeMs: 5000,
  maxStackBytes: 512 * 1024,
  splitTimeMs: 10 * 60 * 1000,
});

/** Upper bounds an app may configure. */
export const MAX_LIMITS: Readonly<Limits> = Object.freeze({
  memoryBytes: 1024 * 1024 * 1024,
  timeMs: 10 * 60 * 1000,
  maxStackBytes: 8 * 1024 * 1024,
  splitTimeMs: 24 * 60 * 60 * 1000,
});

/** Step types this engine runs. */
export const RUNNABLE_TYPES: ReadonlySet<string> = new Set([
  'scripted',
  'scripted-auth',
  'scripted-split-aggregate',
]);

/** Most `sendToStepAndForget` runs in flight per engine. */
export const MAX_FORGOTTEN_RUNS = 64;

function notFound(stepId: string): EngineError {
  return new EngineError('ENGINE_STEP_NOT_FOUND', `no enabled step ${JSON.stringify(stepId.slice(0, 200))}`);
}

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
  /** Aborted by {@link dispose}: cuts the waits of running steps (`sleep`). */
  private readonly disposal = new AbortController();
  private forgotten = 0;
  /** `singleThreaded: "return"` steps (by uid) with a run in progress. */
  private readonly running = new Set<string>();
  private readonly shared: EngineShared;
  /** Enabled steps by `stepId`; more than one when workflows share an id (ADR 0060). */
  private readonly byId = new Map<string, StepModel[]>();

  constructor(
    private readonly models: Map<string, StepModel>,
    options: EngineOptions,
  ) {
    this.steps = Object.freeze([...models.values()].map(stepInfoOf));
    for (const m of models.values()) {
      const list = this.byId.get(m.stepId);
      if (list) list.push(m);
      else this.byId.set(m.stepId, [m]);
    }
    const host = options.host;
    this.shared = {
      realm: randomUUID(),
      host,
      secrets: new SecretSet(options.redactor ?? new Redactor(), (v) => host.registerSecret(v)),
      limits: limitsOf(options),
      stepProps: new Map(),
      authProps: new Map(),
      counters: new Map(),
      deltas: new Map(),
      disposal: this.disposal.signal,
      stores: new Map(),
      restricted: new Map(),
      runNested: (id, input, depth, from) => this.runNested(id, input, depth, true, from),
      forget: (id, input, depth, from) => this.forget(id, input, depth, from),
      stepKey: (id, from) => this.find(id, from)?.uid ?? id,
      // An ambiguous name is no step's type here: the call itself then reports it (as an errored result).
      stepType: (id, from) => {
        try {
          return this.find(id, from)?.type;
        } catch {
          return undefined;
        }
      },
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

  runStep(step: string | StepRef, input: StepInput, options?: RunStepOptions): Promise<StepResult> {
    const depth = options?.depth ?? 0;
    if (!Number.isInteger(depth) || depth < 0 || depth > MAX_SEND_DEPTH)
      throw new RangeError(`runStep: options.depth must be an integer from 0 to ${MAX_SEND_DEPTH}`);
    // A resolution error rejects the promise like any other run error. A callee of another deployment's
    // sendToStep (depth > 0) is nested: its caller holds a sandbox worker while it waits.
    return new Promise((resolve) => resolve(this.run(this.resolve(step), input, depth, depth > 0)));
  }

  /**
   * ADR 0060: a name resolves in the caller's workflow first, then in the whole file when exactly one enabled
   * step uses it; used by several (and not by the caller's workflow) is `ENGINE_STEP_AMBIGUOUS`. Undefined when
   * no enabled step uses it.
   */
  private find(stepId: string, fromWorkflow: number | undefined): StepModel | undefined {
    const list = this.byId.get(stepId);
    if (list === undefined) return undefined;
    const local = list.find((m) => m.workflowIndex === fromWorkflow);
    if (local) return local;
    if (list.length === 1) return list[0];
    throw new EngineError(
      'ENGINE_STEP_AMBIGUOUS',
      `step ${JSON.stringify(stepId.slice(0, 200))} is defined in ${list.length} workflows (${list
        .map((m) => JSON.stringify(m.workflow.slice(0, 100)))
        .join(', ')}); name it from its own workflow or pass its workflowIndex`,
    );
  }

  private resolve(step: string | StepRef, fromWorkflow?: number): StepModel {
    if (typeof step === 'string') return this.find(step, fromWorkflow) ?? throwError(notFound(step));
    if (typeof step !== 'object' || step === null || typeof step.stepId !== 'string')
      throw new TypeError('runStep: step must be a stepId string or { stepId, workflowIndex }');
    const m = this.byId.get(step.stepId)?.find((x) => x.workflowIndex === step.workflowIndex);
    return m ?? throwError(notFound(step.stepId));
  }

  dispose(): void {
    this.disposed = true;
    this.disposal.abort();
    this.shared.stepProps.clear();
    this.shared.authProps.clear();
    dropKeys(this.shared);
  }

  private async run(model: StepModel, input: StepInput, depth: number, nested: boolean): Promise<StepResult> {
    if (this.disposed) throw new EngineError('ENGINE_DISPOSED', 'the workflow engine was disposed');
    if (HOST_SERVED_TYPES.has(model.type)) {
      throw new EngineError(
        'ENGINE_HOST_SERVED',
        `step ${JSON.stringify(model.stepId.slice(0, 200))} is of type ${model.type}: the host serves it (an http trigger), it has no step run`,
      );
    }
    if (!RUNNABLE_TYPES.has(model.type)) {
      throw new EngineError(
        'ENGINE_UNSUPPORTED',
        `step type ${JSON.stringify(model.type)} is not supported by this agent`,
      );
    }
    if (!model.singleThreaded) return runStepFlow(this.shared, model, input, depth, nested);
    if (this.running.has(model.uid)) return skippedResult();
    this.running.add(model.uid);
    try {
      return await runStepFlow(this.shared, model, input, depth, nested);
    } finally {
      this.running.delete(model.uid);
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
    fromWorkflow?: number,
  ): Promise<StepResult> {
    try {
      return await this.run(this.resolve(stepId, fromWorkflow), input, depth, nested);
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

  private forget(stepId: string, input: StepInput, depth: number, fromWorkflow?: number): void {
    const model = this.resolve(stepId, fromWorkflow);
    if (this.forgotten >= MAX_FORGOTTEN_RUNS) {
      throw new EngineError(
        'ENGINE_LIMIT',
        `more than ${MAX_FORGOTTEN_RUNS} sendToStepAndForget runs in flight`,
      );
    }
    this.forgotten++;
    void this.runNested(model.stepId, input, depth, false, model.workflowIndex)
      .then((r) => {
        if (!r.errored) return;
        this.shared.host.log({ level: 'error', message: r.errors.join('; '), stepId, source: 'engine' });
      })
      .finally(() => this.forgotten--);
  }
}

function throwError(err: Error): never {
  throw err;
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
