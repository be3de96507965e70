import { ByteStream } from './byte-stream.js';
import type { StepInput } from './types.js';

/** The state of one step run, carried from processor to processor (docs/interfaces.md §4.3 chains). */
export interface RunState {
  body: string | null;
  bytes: Uint8Array | undefined;
  /** `getPassedMessageAsString()`: the body the step was started with. */
  passed: string | null;
  /** Request or response headers, lower-case names. */
  inHeaders: Record<string, string[]>;
  /** Headers set with `setHeader`: lower-case name → [name as set, value]. */
  outHeaders: Record<string, [string, string]>;
  properties: Record<string, string>;
  url: { hostId: string; path: string } | null;
  method: string | null;
  errors: string[];
  ended: boolean;
  stream: ByteStream;
}

/** What the sandbox sees of the run (the prelude's `S`), as JSON. */
export interface SandboxView {
  mode: string;
  /** Authentication context: an authenticationProcessor, or any processor of a `scripted-auth` step. */
  auth: boolean;
  data: Record<string, unknown>;
  timestampOverride: number | null;
  /** `[maxKeyBytes, maxValueBytes]` when the realm may buffer setPersistedItem calls (README "Persistence"). */
  writeLimits?: [number, number] | null;
}

type Obj = Record<string, unknown>;

function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Lower-cases header names and keeps only string values. */
export function normalizeHeaders(h: Record<string, string[] | string> | undefined): Record<string, string[]> {
  const out = dict<string[]>();
  if (!h) return out;
  for (const [k, v] of Object.entries(h)) {
    const values = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
    const key = k.toLowerCase();
    out[key] = [...(out[key] ?? []), ...values];
  }
  return out;
}

/** The state a step starts with. */
export function initialState(input: StepInput): RunState {
  const properties = dict<string>();
  for (const [k, v] of Object.entries(input.properties ?? {})) if (typeof v === 'string') properties[k] = v;
  const body = typeof input.body === 'string' ? input.body : null;
  return {
    body,
    bytes: undefined,
    passed: body,
    inHeaders: normalizeHeaders(input.headers),
    outHeaders: dict<[string, string]>(),
    properties,
    url: null,
    method: null,
    errors: [],
    ended: false,
    stream: new ByteStream(input.stream, { transferable: input.streamTransferable === true }),
  };
}

/** The JSON the prelude reads as `__input`. */
export function sandboxInput(state: RunState, view: SandboxView): string {
  return JSON.stringify({
    body: state.bytes ? null : state.body,
    passed: state.passed,
    inHeaders: state.inHeaders,
    outHeaders: state.outHeaders,
    properties: state.properties,
    url: state.url,
    method: state.method,
    errors: state.errors,
    ended: false,
    data: view.data,
    mode: view.mode,
    auth: view.auth,
    timestampOverride: view.timestampOverride,
    writeLimits: view.writeLimits ?? null,
  });
}

function stringRecord(v: unknown): Record<string, string> {
  const out = dict<string>();
  if (isObject(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function headerPairs(v: unknown): Record<string, [string, string]> {
  const out = dict<[string, string]>();
  if (!isObject(v)) return out;
  for (const [k, x] of Object.entries(v)) {
    if (Array.isArray(x) && typeof x[0] === 'string' && typeof x[1] === 'string')
      out[k.toLowerCase()] = [x[0], x[1]];
  }
  return out;
}

function headerLists(v: unknown): Record<string, string[]> {
  const out = dict<string[]>();
  if (!isObject(v)) return out;
  for (const [k, x] of Object.entries(v)) {
    if (Array.isArray(x)) out[k.toLowerCase()] = x.filter((s): s is string => typeof s === 'string');
  }
  return out;
}

function readUrl(v: unknown): RunState['url'] {
  if (!isObject(v) || typeof v['hostId'] !== 'string' || typeof v['path'] !== 'string') return null;
  return { hostId: v['hostId'], path: v['path'] };
}

/** What {@link applyOutput} reports about the processor run beyond the state. */
export interface RunOutput {
  /** The script set the body (`setBody`, `setMessage`, `setStream(x)`): it may become the outbound body. */
  bodySet: boolean;
}

/**
 * Applies the sandbox's `__finish()` JSON to the state. The script could have tampered with the output
 * (e.g. `Object.prototype.toJSON`), so every field is type-checked and anything malformed is dropped.
 */
export function applyOutput(state: RunState, json: string, outBytes: Uint8Array | undefined): RunOutput {
  let o: unknown;
  try {
    o = JSON.parse(json);
  } catch {
    o = undefined;
  }
  if (!isObject(o)) throw new TypeError('the sandbox returned no run state');
  state.bytes = o['bodyIsBytes'] === true && outBytes ? outBytes : undefined;
  state.body = typeof o['body'] === 'string' ? o['body'] : null;
  const props = isObject(o['properties']) ? o['properties'] : {};
  state.properties = stringRecord(props);
  state.inHeaders = headerLists(o['inHeaders']);
  state.outHeaders = headerPairs(o['outHeaders']);
  state.url = readUrl(o['url']);
  state.method = typeof o['method'] === 'string' ? o['method'] : null;
  if (Array.isArray(o['errors']))
    state.errors = o['errors'].filter((e): e is string => typeof e === 'string');
  state.ended = o['ended'] === true;
  return { bodySet: o['bodySet'] === true };
}
