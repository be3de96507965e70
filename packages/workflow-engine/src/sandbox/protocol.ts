/**
 * The messages between the engine (main thread, `sandbox.ts` / `sandbox-worker.ts`) and a sandbox worker thread
 * (`sandbox/worker.ts`), ADR 0040. Types only: both sides are built separately and share nothing at run time.
 */
import type { MessagePort } from 'node:worker_threads';

/** One processor run as the worker receives it. */
export interface SandboxJob {
  /** The engine the run belongs to: a worker reuses a sandbox only for runs of the engine that created it. */
  realm: string;
  script: string;
  /** Run state as JSON (read by the prelude). */
  input: string;
  inBytes?: Uint8Array | undefined;
  memoryBytes: number;
  timeMs: number;
  maxStackBytes: number;
}

/** What the worker is started with (its `workerData`). */
export interface SandboxWorkerData {
  /** The host-call channel: requests go out here, the replies come back here. */
  rpcPort: MessagePort;
  /** One Int32: set to 1 and notified by the main thread when a reply has been posted. */
  signal: SharedArrayBuffer;
  /**
   * The QuickJS wasm, compiled once per process: a `WebAssembly.Module`, opaque in the types (the package's `lib`
   * does not declare the `WebAssembly` namespace; the worker hands it to QuickJS as it is).
   */
  wasmModule: object;
  /**
   * Set by `prewarmSandbox` (ADR 0149): the worker sets up one sandbox for runs with this memory limit as it starts,
   * for the first engine that asks with that limit.
   */
  spareMemoryBytes?: number | undefined;
  /** The realm prelude script (`dist/sandbox/prelude.global.js`): completes with `[begin, audit]`. */
  prelude: string;
  /** The helper script (`dist/sandbox/util.global.js`): evaluates to the helper factory, compiled on first use. */
  utilSource: string;
}

/** A thrown value as the worker reads it: `name` and `message` only. */
export interface ErrorFields {
  name: string;
  message: string;
}

/**
 * What the worker posts back: `ready` once when it has loaded (a worker that fails to load emits `error`
 * instead), then one result per job.
 */
export interface WorkerResult {
  kind: 'done' | 'fail' | 'ready';
  output?: string | undefined;
  outBytes?: Uint8Array | undefined;
  scriptError?: ErrorFields | undefined;
  error?: ErrorFields | undefined;
  interrupted?: boolean;
  message?: string;
}

/**
 * A host call from the sandbox; `spare` is the buffer of the previous stream read, given back for reuse. `oneWay`:
 * the worker does not wait for a reply (the write buffer's last batch, posted just before the run's result; the
 * main thread handles it before the result).
 */
export interface HostCallMessage {
  op: string;
  args: { json: string; bytes?: Uint8Array | undefined; text?: string | undefined };
  spare?: ArrayBuffer;
  oneWay?: boolean;
}

/** The main thread's answer to a host call: a JSON-able value or bytes, or an error message. */
export interface HostReply {
  value?: unknown;
  error?: string;
  /** The value is a stream read's buffer, moved to the worker: it comes back as `spare` with the next call. */
  stream?: boolean;
  /** A stream read's bytes as the chunks they arrived in, their buffers moved to the worker (the value is unset). */
  parts?: Uint8Array[];
}
