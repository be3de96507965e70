import { ByteStream } from './byte-stream.js';
import { EngineError } from './errors.js';
import { SPLIT_CONCURRENCY, SplitItems } from './split-ops.js';
import type { RunState } from './run-state.js';
import type { Flow } from './step-runner.js';
import type { ProcessorSlot, ScriptUnit } from './workflow-model.js';

/** The step type this file runs (docs/interfaces.md §4.5). */
export const SPLIT_STEP_TYPE = 'scripted-split-aggregate';

/** What the split flow borrows from the ordinary call cycle (step-runner.ts). */
export interface CallCycle {
  /** Runs a processor chain; false when the step must stop (script error or `end()`). */
  runChain(flow: Flow, units: ScriptUnit[], mode: ProcessorSlot | 'httpStatusHandling'): Promise<boolean>;
  /** url → payload → auth → call → httpStatusHandling / itemResultProcessor, on one item's flow. */
  runItem(flow: Flow): Promise<void>;
}

const utf8 = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();

function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * The state an item starts with: a copy of the step's state after the splitGenerator (properties, headers, URL
 * and method, the passed message), with the item as its body and an empty stream. Nothing an item changes is
 * seen by another item or by the resultsProcessor.
 */
function itemState(base: RunState, item: string): RunState {
  const inHeaders = dict<string[]>();
  for (const [k, v] of Object.entries(base.inHeaders)) inHeaders[k] = [...v];
  const outHeaders = dict<[string, string]>();
  for (const [k, v] of Object.entries(base.outHeaders)) outHeaders[k] = [v[0], v[1]];
  return {
    body: item,
    bytes: undefined,
    passed: base.passed,
    inHeaders,
    outHeaders,
    properties: Object.assign(dict<string>(), base.properties),
    url: base.url === null ? null : { ...base.url },
    method: base.method,
    errors: [],
    ended: false,
    stream: new ByteStream(undefined),
  };
}

/**
 * One element of the aggregate: a body that is one JSON value goes in as that JSON text, unchanged (no
 * re-serialisation, so large numbers keep their digits); any other text as a JSON string; no body as `null`.
 */
export function aggregateElement(body: string | null): string {
  if (body === null) return 'null';
  try {
    JSON.parse(body);
    return body;
  } catch {
    return JSON.stringify(body);
  }
}

/** The UTF-8 bytes of `text` as a one-chunk source, encoded at the first read. */
function encodedOnRead(text: string): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      let done = false;
      return {
        next(): Promise<IteratorResult<Uint8Array, undefined>> {
          if (done) return Promise.resolve({ done: true, value: undefined });
          done = true;
          return Promise.resolve({ done: false, value: utf8Encoder.encode(text) });
        },
      };
    },
  };
}

interface ItemsOutcome {
  elements: string[];
  /** `item <i>: <error>`, in item order. */
  errors: string[];
  overflow: boolean;
  /** Items whose cycle completed (their element is stored). */
  done: number;
}

/**
 * Runs every item's call cycle, at most {@link SPLIT_CONCURRENCY} at a time, and collects their bodies in item
 * order. After the first errored item (or the results passing `maxBytes`) no further item starts; items already
 * running finish. At the deadline (`signal`) no further item starts and running ones stop where they are: their
 * calls are aborted, no further processor of theirs runs, and what they produced is dropped. A thrown
 * EngineError (timeout, memory, sandbox) is rethrown once every running item is done.
 */
async function runItems(
  flow: Flow,
  cycle: CallCycle,
  items: readonly string[],
  signal: AbortSignal,
): Promise<ItemsOutcome> {
  const maxBytes = flow.shared.limits.memoryBytes;
  const elements: string[] = [];
  const errors: [number, string][] = [];
  let done = 0;
  let next = 0;
  let bytes = 2; // the brackets
  let stop = false;
  let overflow = false;
  let thrown: { error: unknown } | undefined;
  const runOne = async (i: number): Promise<void> => {
    const f: Flow = {
      shared: flow.shared,
      step: flow.step,
      state: itemState(flow.state, items[i]!),
      depth: flow.depth,
      nested: flow.nested,
      authHeaders: dict<[string, string]>(),
      signal,
      store: flow.store,
      packager: flow.packager,
    };
    await cycle.runItem(f);
    if (signal.aborted) return; // cut short: neither a result nor an error of its own
    const { state } = f;
    if (state.errors.length > 0) {
      stop = true;
      for (const e of state.errors) errors.push([i, `item ${i}: ${e}`]);
      return;
    }
    const body = state.bytes ? utf8.decode(state.bytes) : state.body;
    // Checked before parsing, and again for the element (a body quoted as a JSON string can grow).
    if (body !== null && bytes + Buffer.byteLength(body, 'utf8') > maxBytes) {
      overflow = stop = true;
      return;
    }
    const element = aggregateElement(body);
    bytes += Buffer.byteLength(element, 'utf8') + 1;
    if (bytes > maxBytes) {
      overflow = stop = true;
      return;
    }
    elements[i] = element;
    done++;
  };
  const worker = async (): Promise<void> => {
    while (!stop && !signal.aborted && next < items.length) {
      const i = next++;
      try {
        await runOne(i);
      } catch (error) {
        stop = true;
        thrown ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SPLIT_CONCURRENCY, items.length) }, worker));
  if (thrown) throw thrown.error;
  errors.sort((a, b) => a[0] - b[0]);
  return { elements, errors: errors.map(([, e]) => e), overflow, done };
}

/** Aborts `controller` after `ms` with the step's `ENGINE_SPLIT_DEADLINE` (the reason calls reject with). */
function startDeadline(flow: Flow, ms: number): { controller: AbortController; timer: NodeJS.Timeout } {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    const step = JSON.stringify(flow.step.stepId.slice(0, 200));
    controller.abort(new EngineError('ENGINE_SPLIT_DEADLINE', `split step ${step} passed its deadline`));
  }, ms);
  return { controller, timer };
}

function deadlineError(flow: Flow, done: number, total: number): string {
  const step = JSON.stringify(flow.step.stepId.slice(0, 200));
  const ms = flow.shared.limits.splitTimeMs;
  return `ENGINE_SPLIT_DEADLINE: split step ${step} passed its deadline of ${ms} ms with ${done} of ${total} items completed`;
}

/**
 * Runs a `scripted-split-aggregate` step (README.md "Split and aggregate"): the splitGenerator on the step's
 * input emits items; each item runs the call cycle with `itemResultProcessor` in place of `resultsProcessor`;
 * the resultsProcessor runs once on the step's state with the JSON array of the item results as its body.
 * `limits.splitTimeMs` bounds everything before the resultsProcessor, which then runs with the limits of any
 * processor run (ADR 0069).
 *
 * @throws EngineError `ENGINE_TIMEOUT`, `ENGINE_MEMORY`, `ENGINE_SANDBOX_FAILED` from a processor run.
 */
export async function runSplitFlow(flow: Flow, cycle: CallCycle): Promise<void> {
  const { controller, timer } = startDeadline(flow, flow.shared.limits.splitTimeMs);
  flow.signal = controller.signal;
  let aggregate: string | undefined;
  try {
    aggregate = await splitAndRunItems(flow, cycle, controller.signal);
  } finally {
    clearTimeout(timer);
    flow.signal = undefined;
  }
  if (aggregate === undefined) return;
  Object.assign(flow.state, {
    body: aggregate,
    bytes: undefined,
    // getStream() reads the aggregate too; encoded only if a script reads it.
    stream: new ByteStream(encodedOnRead(aggregate)),
    // Headers set for the item calls are request headers: like after a call, they are not response headers.
    outHeaders: dict<[string, string]>(),
    url: null,
    method: null,
  });
  const results = flow.step.processors.resultsProcessor;
  if (results) await cycle.runChain(flow, results, 'resultsProcessor');
}

/** The splitGenerator and every item; the aggregate, or undefined when the step failed (errors in its state). */
async function splitAndRunItems(
  flow: Flow,
  cycle: CallCycle,
  signal: AbortSignal,
): Promise<string | undefined> {
  const { state, step, shared } = flow;
  const split = new SplitItems(shared.limits.memoryBytes);
  const generator = step.processors.splitGenerator;
  if (generator) {
    flow.split = split;
    let ok: boolean;
    try {
      ok = await cycle.runChain(flow, generator, 'splitGenerator');
    } finally {
      flow.split = undefined;
    }
    // A limit breach fails the step even when the script caught the error.
    if (split.breach !== undefined && state.errors.length === 0)
      state.errors.push(`splitGenerator: ENGINE_LIMIT: ${split.breach}`);
    if (signal.aborted) state.errors.push(deadlineError(flow, 0, split.items.length));
    if (!ok || state.errors.length > 0) return undefined;
  }
  const { elements, errors, overflow, done } = await runItems(flow, cycle, split.items, signal);
  state.errors.push(...errors);
  // The resultsProcessor never sees a partial aggregate (ADR 0069).
  if (signal.aborted) state.errors.push(deadlineError(flow, done, split.items.length));
  if (state.errors.length > 0) return undefined;
  if (overflow) {
    state.errors.push(`ENGINE_LIMIT: split results over ${shared.limits.memoryBytes} bytes in total`);
    return undefined;
  }
  return `[${elements.join(',')}]`;
}
