import {
  EngineError,
  listSteps,
  type RunStepOptions,
  type StepInfo,
  type StepInput,
  type StepRef,
  type StepResult,
  type WorkflowEngine,
} from '@org/workflow-engine';

/**
 * The engine of a `deferLoading` deployment: its steps (and so its triggers) are known at start-up from the
 * workflow, and the engine itself — with its step stores — is created on the first run. Concurrent first runs
 * share one creation; a failed creation stays failed (every run rejects with its code) until restart.
 */
export class DeferredEngine implements WorkflowEngine {
  readonly steps: readonly StepInfo[];
  readonly #create: () => Promise<WorkflowEngine>;
  #engine: Promise<WorkflowEngine> | undefined;
  #built: WorkflowEngine | undefined;
  #disposed = false;

  /**
   * `data`: the record's data, as the engine will get it (its steps' `packagerOperation` show it).
   * @throws EngineError `ENGINE_INVALID_WORKFLOW` when the workflow is not a compiled workflow file.
   */
  constructor(workflow: unknown, create: () => Promise<WorkflowEngine>, data: Record<string, unknown> = {}) {
    this.steps = Object.freeze(listSteps(workflow, data));
    this.#create = create;
  }

  /** True once the engine exists. */
  get isBuilt(): boolean {
    return this.#built !== undefined;
  }

  /** Creates the engine once (the first caller starts it; the others wait for the same promise). */
  build(): Promise<WorkflowEngine> {
    if (this.#disposed)
      return Promise.reject(new EngineError('ENGINE_DISPOSED', 'the workflow engine was disposed'));
    this.#engine ??= this.#create().then((engine) => {
      // Stopped while it was being created: nothing may run on it.
      if (this.#disposed) engine.dispose();
      this.#built = engine;
      return engine;
    });
    return this.#engine;
  }

  async runStep(step: string | StepRef, input: StepInput, options?: RunStepOptions): Promise<StepResult> {
    const engine = await this.build();
    return engine.runStep(step, input, options);
  }

  dispose(): void {
    this.#disposed = true;
    this.#built?.dispose();
  }
}
