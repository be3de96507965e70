/**
 * Types shared by the realm scripts (`prelude.ts`, `util-factory.ts` and the files they import). Types only: the
 * prelude and the helper factory are separate scripts (ADR 0050), so they may share types but never values.
 */

/** The one host function the worker installs (`sandbox/worker.ts`): a JSON string, an ArrayBuffer or nothing. */
/**
 * The one host function: `op`, its arguments as JSON, optionally bytes, and optionally a text passed on as it is
 * (no JSON: the write buffer's keys and values, `persist.setMany`).
 */
export type HostFunction = (
  op: string,
  args: string,
  bytes: ArrayBuffer | undefined,
  text: string | undefined,
) => unknown;

/**
 * The global object of a realm as the prelude finds it: what the worker installs before the prelude runs and
 * what hardening removes. The prelude captures and deletes `__host` and `__utilSource` before anything else runs.
 */
export interface RealmGlobals {
  __host?: HostFunction;
  __utilSource?: string;
  FinalizationRegistry?: unknown;
  SharedArrayBuffer?: unknown;
}

/**
 * The run state as the prelude holds it (`S`): the JSON of `sandboxInput()` in `run-state.ts`, plus what the
 * prelude adds before `finish()` returns it. The engine type-checks every field of the JSON it gets back.
 */
export interface RunState {
  body: string | null;
  passed: string | null;
  inHeaders: Record<string, string[]>;
  /** Lower-case name → [name as set, value]. */
  outHeaders: Record<string, [string, string]>;
  properties: Record<string, string | null>;
  url: { hostId: string; path: string } | null;
  method: string | null;
  errors: string[];
  ended: boolean;
  data: Record<string, unknown>;
  mode: string;
  /** An authentication context (set by the engine, from the processor slot, never by the script). */
  auth: boolean;
  timestampOverride: number | null;
  /**
   * `[maxKeyBytes, maxValueBytes]` when setPersistedItem calls may be buffered (the step has a store this run may
   * write, not an auth context); null otherwise.
   */
  writeLimits?: [number, number] | null;
  streamCleared?: boolean;
  bodyIsBytes?: boolean;
  /** The script called `setBody`/`setMessage`/`setStream(x)` in this run (the outbound body, README "Step flow"). */
  bodySet?: boolean;
}

/** `context.getStream()` and `bytes().reader(b)`. */
export interface ByteReader {
  read(n?: unknown): Uint8Array;
  readAll(): Uint8Array;
  available(): unknown;
}

/** A call to the host: `op` and its arguments as JSON, optionally bytes; returns the parsed reply. */
export type HostCall = (op: string, args?: unknown[], bytes?: ArrayBuffer) => unknown;

/** What the prelude hands the helper factory for one run (`env` of `util-factory.ts` and `extras.ts`). */
export interface UtilEnv {
  call: HostCall;
  S: RunState;
  setBodyValue(x: unknown): void;
  getBodyString(): string | null;
  streamReader(): ByteReader;
  stringify: typeof JSON.stringify;
  parse: typeof JSON.parse;
}
