import { ByteStream } from './byte-stream.js';
import { SPLIT_CONCURRENCY, SplitItems } from './split-ops.js';
import type { RunState } from './run-state.js';
import type { Flow } from './step-runner.js';
import type { ProcessorSlot, ScriptUnit } from './workflow-model.js';

/** The step type this file runs (interfaces.md §4.5). */
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
}

/**
 * Runs every item's call cycle, at most {@link SPLIT_CONCURRENCY} at a time, and collects their bodies in item
 * order. After the first errored item (or the results passing `maxBytes`) no further item starts; items already
 * running finish. A thrown EngineError (timeout, memory, sandbox) is rethrown once every running item is done.
 */
async function runItems(flow: Flow, cycle: CallCycle, items: readonly string[]): Promise<ItemsOutcome> {
  const maxBytes = flow.shared.limits.memoryBytes;
  const elements: string[] = [];
  const errors: [number, string][] = [];
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
    };
    await cycle.runItem(f);
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
  };
  const worker = async (): Promise<void> => {
    while (!stop && next < items.length) {
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
  return { elements, errors: errors.map(([, e]) => e), overflow };
}

/**
 * Runs a `scripted-split-aggregate` step (README.md "Split and aggregate"): the splitGenerator on the step's
 * input emits items; each item runs the call cycle with `itemResultProcessor` in place of `resultsProcessor`;
 * the resultsProcessor runs once on the step's state with the JSON array of the item results as its body.
 *
 * @throws EngineError `ENGINE_TIMEOUT`, `ENGINE_MEMORY`, `ENGINE_SANDBOX_FAILED` from a processor run.
 */
export async function runSplitFlow(flow: Flow, cycle: CallCycle): Promise<void> {
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
    if (!ok || state.errors.length > 0) return;
  }
  const { elements, errors, overflow } = await runItems(flow, cycle, split.items);
  if (errors.length > 0) {
    state.errors.push(...errors);
    return;
  }
  if (overflow) {
    state.errors.push(`ENGINE_LIMIT: split results over ${shared.limits.memoryBytes} bytes in total`);
    return;
  }
  const aggregate = `[${elements.join(',')}]`;
  Object.assign(state, {
    body: aggregate,
    bytes: undefined,
    // getStream() reads the aggregate too; encoded only if a script reads it.
    stream: new ByteStream(encodedOnRead(aggregate)),
    // Headers set for the item calls are request headers: like after a call, they are not response headers.
    outHeaders: dict<[string, string]>(),
    url: null,
    method: null,
  });
  const results = step.processors.resultsProcessor;
  if (results) await cycle.runChain(flow, results, 'resultsProcessor');
}
