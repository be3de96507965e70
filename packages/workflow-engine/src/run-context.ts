import { codeOf, messageOf } from './errors.js';
import type { SecretSet } from './redact.js';
import type { RunState } from './run-state.js';
import type { SplitItems } from './split-ops.js';
import type { PackagerSlot } from './packager-ops.js';
import type { PersistentStore } from './persistence/types.js';
import type { EngineHost, StepInput, StepResult } from './types.js';
import type { StepModel } from './workflow-model.js';

/** Per-run limits with defaults applied. */
export interface Limits {
  memoryBytes: number;
  timeMs: number;
  maxStackBytes: number;
  /** Deadline of one run of a split-aggregate step, from its start (README.md "Split and aggregate"). */
  splitTimeMs: number;
}

/** State shared by every run of one engine (one loaded workflow file). */
export interface EngineShared {
  /** Identifies this engine to the sandbox workers: their sandboxes are never shared between engines. */
  realm: string;
  host: EngineHost;
  secrets: SecretSet;
  limits: Limits;
  stepProps: Map<string, Map<string, string>>;
  authProps: Map<string, { value: string; expiresAt: number }>;
  counters: Map<string, number>;
  deltas: Map<string, number>;
  /** Aborted when the engine is disposed: waits of its runs (`sleep`) end at once (ENGINE_DISPOSED). */
  disposal: AbortSignal;
  /** The store of each step with persistence, by step id (persist-ops.ts). */
  stores: Map<string, PersistentStore>;
  /** Restricted-data values per authentication host id (may only be sent to that host). */
  restricted: Map<string, Set<string>>;
  /**
   * Runs a step for `sendToStep`; never rejects (failures become an errored result). `fromWorkflow`: the caller's
   * workflow index, searched first (ADR 0060).
   */
  runNested(stepId: string, input: StepInput, depth: number, fromWorkflow?: number): Promise<StepResult>;
  /** Starts a step for `sendToStepAndForget`. */
  forget(stepId: string, input: StepInput, depth: number, fromWorkflow?: number): void;
  /**
   * The state key of the step a script names (authentication properties): resolved like `sendToStep`; a name no
   * enabled step uses keys by itself. Throws `ENGINE_STEP_AMBIGUOUS`.
   */
  stepKey(stepId: string, fromWorkflow: number): string;
  /**
   * The type of the enabled step a script names (`scripted`, `scripted-auth`, …), resolved like `sendToStep`;
   * undefined when there is none or the name is ambiguous.
   */
  stepType(stepId: string, fromWorkflow: number): string | undefined;
}

/** One processor run's view: the engine, the step, the state and the context mode. */
export interface RunContext {
  shared: EngineShared;
  step: StepModel;
  state: RunState;
  isAuth: boolean;
  /** The processor's data, merged down (docs/interfaces.md §4.6): it adds metric dimensions (metric-dimensions.ts). */
  data: Readonly<Record<string, unknown>>;
  depth: number;
  sleptMs: number;
  errorText(err: unknown): string;
  /**
   * The step run's view of its step's store (persist-ops.ts, ADR 0126): its writes commit when the step run ends,
   * with no other run's. Undefined on a step without persistence.
   */
  store?: PersistentStore | undefined;
  /** Aborted when the split deadline passed: host calls that wait on the network end (split-runner.ts). */
  signal?: AbortSignal | undefined;
  /** Where `addSplitReturnItem` puts items: set only for the splitGenerator of a split-aggregate step. */
  split?: SplitItems | undefined;
  /**
   * In an authentication context: the run properties as ordinary processors left them when it began (values
   * that differ were set there and are secret when passed on, ADR 0054).
   */
  authBaseline?: Readonly<Record<string, string>> | undefined;
  /** The step run's held packager request and its answer (packager-ops.ts); undefined in a run without one. */
  packager?: PackagerSlot | undefined;
}

/** `CODE: message` for coded errors, the message otherwise. */
export function errorText(err: unknown): string {
  const code = codeOf(err);
  const msg = messageOf(err);
  return code && !msg.startsWith(`${code}:`) ? `${code}: ${msg}` : msg;
}
