import type { Redactor } from './redact.js';
import type { PersistenceProvider } from './persistence/types.js';
import type { FileHost } from './file-ops.js';

/** One outbound request the engine asks the app to make (docs/interfaces.md §6.3). */
export interface OutboundRequest {
  hostId: string;
  path: string;
  /** `setHttpMethod` value upper-cased; else `POST` when a body is set, `GET` when not. */
  method: string;
  /** Headers set by the payloadGenerator / authenticationProcessor (original case of the last set). */
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  /** True for a call made by `context.callAuthenticationHost` inside an authenticationProcessor. */
  isAuthenticationProcessor: boolean;
  /** The step's `httpTimeout`, when set. */
  timeoutMs: number | undefined;
  /**
   * Aborted when the engine no longer waits for the answer (the deadline of a split-aggregate step passed,
   * `limits.splitTimeMs`); the host should then end the call and reject. Absent for calls nothing can abort.
   */
  signal?: AbortSignal | undefined;
}

/** The answer to an {@link OutboundRequest}. */
export interface OutboundResponse {
  status: number;
  headers: Record<string, string[]>;
  body: Uint8Array;
}

/**
 * Implemented by the app. Errors thrown are coded (`{ code, message }`); `POLICY_CONNECT_FAILED` or
 * `POLICY_TIMEOUT` means the connection failed (→ httpConnectFailedProcessor); any other code is a refused call
 * (→ run error).
 */
export interface EngineHost {
  callOutbound(req: OutboundRequest): Promise<OutboundResponse>;
  /** A declared host's `data` as JSON with every `-2/` value decrypted; called only in authentication context. */
  getRestrictedData(hostId: string): Promise<string>;
  /**
   * Every value that must never be logged or exported, once each, as is: the app registers it with its
   * {@link Redactor}, which derives the encoded forms.
   */
  registerSecret(value: string): void;
  /** A log line. `debug`: engine diagnostics such as a `sendToStep` callee's errors (SPEC.md §5.6). */
  log(entry: {
    level: 'debug' | 'info' | 'warn' | 'error';
    message: string;
    stepId?: string;
    source: 'console' | 'diagnostic' | 'engine';
  }): void;
  metric(m: { key: string; value: number; timestamp: number; dimensions: Record<string, string> }): void;
  now(): number;
  /** Waits for `sleep(ms)` in a script (ms already clamped); default `setTimeout`. A test host may fake time. */
  sleep?(ms: number): Promise<void>;
  /** Step stores (README.md "Persistence"); required when a step has `persistenceFile` or `persistence`. */
  persistence?: PersistenceProvider | undefined;
  /** `context.files(id)` (SPEC.md §7.5); without it every file call is refused (`ENGINE_NOT_PERMITTED`). */
  files?: FileHost | undefined;
  /**
   * `sendToStep(accessId, stepId, body)`: a call to a step of another deployment (SPEC.md §5.6). The app decides
   * who the caller is and checks both sides' grants; it rejects a refused call with a coded error (thrown into
   * the script) and resolves with the callee's result otherwise. Absent → the call throws `ENGINE_UNSUPPORTED`.
   */
  sendToDeployment?(call: DeploymentCall): Promise<StepResult>;
  /**
   * The packager capability (SPEC.md §7.6): `true` when the deployment is granted it (`allowPackagerAccess`).
   * Without it `context.packager()` throws `ENGINE_NOT_PERMITTED` and no held request is run.
   */
  packager?: boolean | undefined;
}

/**
 * A request the host read and holds for one step run (SPEC.md §7.6, ADR 0136): the packager request of an
 * HTTP-triggered step. It stays on the host side: nothing of it enters the sandbox. The host wipes it when the run
 * ends.
 */
export interface PackagerRequest {
  /** The operation the step declared (`data.packagerOperation`), for messages. */
  readonly operation: string;
  /**
   * Runs the request, once. Should never reject: a refused or failed request is an answer (a problem). A rejection
   * fails the `context.packager()` call with `ENGINE_OUTBOUND_FAILED` and a fixed message.
   */
  run(): Promise<PackagerResponse>;
}

/** What a {@link PackagerRequest} answers: the step run's response. */
export interface PackagerResponse {
  /** 200 … 599. */
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** The problem `code` of an error answer, else null: with `status`, all the script learns of the answer. */
  code: string | null;
}

/** `sendToStep(accessId, stepId, body)` as the engine hands it to {@link EngineHost.sendToDeployment}. */
export interface DeploymentCall {
  /** The id the script passed: the caller's `allowDeploymentAccess` entry (unchecked by the engine). */
  accessId: string;
  stepId: string;
  body: string | undefined;
  /** The callee run's depth in the chain of step calls (pass it on as {@link RunStepOptions.depth}). */
  depth: number;
}

/** Options of {@link WorkflowEngine.runStep}. */
export interface RunStepOptions {
  /**
   * The run is the callee of a step call from another deployment, at this depth (0 … `MAX_SEND_DEPTH`; default
   * 0, a trigger): its own step calls count on from it, and it does not wait for a pooled sandbox worker its
   * caller may be holding.
   */
  depth?: number;
}

/** What a step run gets (docs/interfaces.md §6.1). */
export interface StepInput {
  /** `getBody()`. */
  body: string | undefined;
  /** `getStream()`; undefined → an empty reader. */
  stream: AsyncIterable<Uint8Array> | undefined;
  /**
   * True when every chunk of `stream` is a view into an ArrayBuffer nothing else uses once the chunk is
   * delivered (e.g. `@org/multipart-limits`' multipart `stream`): the engine then moves whole chunks to the
   * sandbox worker instead of copying them. Default false (chunks are copied).
   */
  streamTransferable?: boolean;
  /** `getHeader(name)`; names are matched case-insensitively. */
  headers: Record<string, string[]>;
  /** Run properties, e.g. `http.method`, `http.path`, `http.query`, `http.uri` (README.md). */
  properties: Record<string, string>;
  /**
   * The request the host holds for this run (SPEC.md §7.6): `context.packager()` runs it once and its answer
   * becomes the step's response. Never sent into the sandbox; only a top-level run gets it (not a `sendToStep`
   * callee).
   */
  packagerRequest?: PackagerRequest | undefined;
}

/** What a step run produced. */
export interface StepResult {
  /** From `setProperty('status_code', …)`, or the outbound response status. */
  status: number | undefined;
  body: string | Uint8Array | undefined;
  /** Headers set with `setHeader` after the last outbound call (response headers of a trigger step). */
  headers: Record<string, string>;
  properties: Record<string, string>;
  /** A processor threw, a call was refused, or `addSystemError` was called. */
  errored: boolean;
  /** Safe messages: registered secrets are replaced by `REDACTED`. */
  errors: string[];
}

/** Options of `createWorkflowEngine`. */
export interface EngineOptions {
  host: EngineHost;
  /** Bootstrap record `data` (top of the merge chain). */
  data: Record<string, unknown>;
  /**
   * Per processor run (`memoryBytes`, `timeMs`, `maxStackBytes`; defaults 32 MiB, 5000 ms, 512 KiB) and per run
   * of a split-aggregate step (`splitTimeMs`, default 600 000 ms). Bounds: `MAX_LIMITS`.
   */
  limits?: { memoryBytes?: number; timeMs?: number; maxStackBytes?: number; splitTimeMs?: number };
  /**
   * The redactor the engine scrubs errors, logs and results with and registers secrets into (default: its own).
   * An app passes its own so that engine and app share one set of secrets (ADR 0054).
   */
  redactor?: Redactor;
}

/**
 * Names one step exactly: its `stepId` and the index of its workflow in the file (ADR 0060). A {@link StepInfo}
 * is one.
 */
export interface StepRef {
  stepId: string;
  workflowIndex: number;
}

/** One enabled step of the workflow. */
export interface StepInfo {
  stepId: string;
  /** Index of the step's workflow in the file's `workflows` array. */
  workflowIndex: number;
  /** The workflow's `name`. */
  workflow: string;
  /** The step's trigger object as compiled (undefined when the step has none). */
  trigger: unknown;
  /**
   * The step's `type` (`scripted` when the file leaves it out). The engine always sets it; a `StepInfo` built by
   * hand may omit it.
   */
  type?: string;
  /**
   * The step's `data.packagerOperation` as merged down to the step (bootstrap → file → workflow → step; SPEC.md
   * §7.6), whatever its type; undefined when the data has none. The host decides what it means.
   */
  packagerOperation?: unknown;
}

/** A loaded workflow file. */
export interface WorkflowEngine {
  /** Every enabled step, in file order. */
  readonly steps: readonly StepInfo[];
  /**
   * Runs one step (README.md "Step flow"). Script errors, refused calls and `addSystemError` resolve with
   * `errored: true`. A {@link StepRef} (or a {@link StepInfo} from `steps`) names the step exactly; a bare
   * `stepId` must be used by one enabled step only (ADR 0060). Triggers pass the step's `StepInfo`.
   *
   * @throws EngineError `ENGINE_STEP_NOT_FOUND`, `ENGINE_STEP_AMBIGUOUS` (a bare id used in several workflows),
   *   `ENGINE_TIMEOUT`, `ENGINE_MEMORY`, `ENGINE_SANDBOX_FAILED`, `ENGINE_UNSUPPORTED` (step type),
   *   `ENGINE_HOST_SERVED` (an `httpFile` step), `ENGINE_DISPOSED` — as a rejected promise.
   */
  runStep(step: string | StepRef, input: StepInput, options?: RunStepOptions): Promise<StepResult>;
  /** Refuses further runs and drops in-memory step and authentication properties. */
  dispose(): void;
}
