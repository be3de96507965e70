import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { MessageChannel, Worker, type MessagePort, type WorkerOptions } from 'node:worker_threads';
import { EngineError } from './errors.js';
import {
  countStarted,
  onIdleMsChange,
  sandboxIdleMs,
  sandboxWorkers,
  sandboxWorkersStarted,
} from './sandbox-workers.js';
import { readSandboxScripts, sandboxWorkerUrl } from './sandbox-files.js';
import type { SandboxWorkerData } from './sandbox/protocol.js';
import { SandboxWorker, type SandboxJob, type SandboxOutcome, type HostHandler } from './sandbox-worker.js';

export type { SandboxJob, SandboxOutcome, HostHandler } from './sandbox-worker.js';

const require = createRequire(import.meta.url);

/**
 * A compiled `WebAssembly.Module`, opaque here: this package's `lib` (ES2024) does not declare the `WebAssembly`
 * namespace (the tests' type check gets it from esbuild's types, the build's declarations do not).
 */
type WasmModule = object;

interface Boot {
  wasmModule: WasmModule;
  prelude: string;
  utilSource: string;
}

let boot: Promise<Boot> | undefined;

/** `WebAssembly` is a global in Node, but this package's `lib` does not declare it. */
const wasmApi = (globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<WasmModule> } })
  .WebAssembly;

/**
 * Compiles the QuickJS wasm and reads the realm scripts once per process (ADR 0040, 0050); every worker
 * instantiates this module and gets these scripts. A failure is not kept: the next run tries again.
 */
function loadBoot(): Promise<Boot> {
  boot ??= (async () => {
    const scripts = await readSandboxScripts();
    const wasmPath = require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
    const wasmModule = await wasmApi.compile(readFileSync(wasmPath));
    return { wasmModule, ...scripts };
  })().catch((e: unknown) => {
    boot = undefined;
    throw e;
  });
  return boot;
}

/** V8 heap sizes: a worker refuses them in `execArgv` (ERR_WORKER_INVALID_EXEC_ARGV); `resourceLimits` sizes its heap. */
const HEAP_FLAG = /^--(?:max|min|initial)[-_](?:old[-_]space|semi[-_]space|heap)[-_]size(=|$)/;

/**
 * The parent's Node flags minus those that only make sense for the parent's own entry (`-e`/`-p` code,
 * `--input-type`) and the V8 heap sizes: a worker started from a file inherits `process.execArgv`, and
 * `--input-type` alone makes it fail, so hosting the engine from `node --input-type=module -e …` would not start a
 * sandbox; nor would `node --max-old-space-size=… main.js`.
 */
function workerExecArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const heap = HEAP_FLAG.exec(a);
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') i++;
    else if (heap) {
      if (heap[1] === '' && /^[0-9]+$/.test(argv[i + 1] ?? '')) i++;
    } else if (!a.startsWith('--input-type') && !a.startsWith('--eval=') && !a.startsWith('--print='))
      out.push(a);
  }
  return out;
}

/**
 * The flags a sandbox worker gets: {@link workerExecArgv} of the host's, less any a worker refuses. Node refuses
 * V8 options and per-process options in a worker's `execArgv` (ERR_WORKER_INVALID_EXEC_ARGV: `--stack-trace-limit`,
 * `--perf-basic-prof`, `--expose-gc`, `--jitless`, `--secure-heap`, …) and names them in the error: they are left
 * out (they hold for the whole process anyway, or concern only the host), once per process. Should the names not
 * be readable, the worker gets no flags.
 */
let acceptedArgv: readonly string[] | undefined;

function startWorker(options: Omit<WorkerOptions, 'execArgv'>): Worker {
  const argv = acceptedArgv ?? workerExecArgv(process.execArgv);
  try {
    const worker = new Worker(sandboxWorkerUrl(), { ...options, execArgv: [...argv] });
    acceptedArgv = argv;
    return worker;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || argv.length === 0) throw err;
    acceptedArgv = withoutRefused(argv, String((err as Error).message));
    return startWorker(options);
  }
}

/** `argv` less the flags node's message names (`…invalid execArgv flags: --a, --b=1`), or none when unreadable. */
export function withoutRefused(argv: readonly string[], message: string): string[] {
  const listed = /flags: (.+)$/.exec(message)?.[1]?.split(', ') ?? [];
  const refused = new Set(listed);
  const kept = argv.filter((a) => !refused.has(a));
  return kept.length === argv.length ? [] : kept;
}

/** The memory limit of a processor run unless the engine's options set another (`DEFAULT_LIMITS.memoryBytes`). */
export const DEFAULT_RUN_MEMORY_BYTES = 32 * 1024 * 1024;

/** A new worker; with `spareMemoryBytes`, it sets up a sandbox for runs with that memory limit as it starts. */
function spawn(b: Boot, spareMemoryBytes?: number): SandboxWorker {
  const { port1, port2 }: { port1: MessagePort; port2: MessagePort } = new MessageChannel();
  const signal = new SharedArrayBuffer(4);
  return new SandboxWorker(
    () =>
      startWorker({
        workerData: { ...b, rpcPort: port2, signal, spareMemoryBytes } satisfies SandboxWorkerData,
        transferList: [port2],
        resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 },
      }),
    port1,
    signal,
  );
}

/** A worker started ahead of any run ({@link prewarmSandbox}), until a run takes it or it goes idle. */
interface Warming {
  /** The worker once spawned (the wasm compiled); it keeps the process alive only once a run has taken it. */
  worker: SandboxWorker | undefined;
  taken: boolean;
  /** The worker once ready, or `undefined` if it could not start (already counted off and forgotten). */
  ready: Promise<SandboxWorker | undefined>;
}

/**
 * Starts the worker of `warming`, which also sets up a sandbox for runs with the default memory limit (the first
 * engine's, unless its options set another); never rejects.
 */
async function startEarly(warming: Warming): Promise<SandboxWorker | undefined> {
  try {
    const w = spawn(await loadBoot(), DEFAULT_RUN_MEMORY_BYTES);
    warming.worker = w;
    if (!warming.taken) w.unref();
    await w.ready;
    return w;
  } catch {
    countStarted(-1);
    if (warming.worker) void warming.worker.terminate().catch(() => undefined);
    return undefined;
  }
}

/** A process-wide pool of sandbox workers. */
class SandboxPool {
  /** Idle workers, the most recently released last (taken first); their `idleSince` rises from index 0. */
  private readonly idle: SandboxWorker[] = [];
  private readonly waiting: ((w: SandboxWorker) => void)[] = [];
  /** The pending check for workers idle longer than {@link sandboxIdleMs}, and when it is due. */
  private sweep: NodeJS.Timeout | undefined;
  private sweepAt = 0;
  private warming: Warming | undefined;

  constructor() {
    // A shorter idle time applies to the workers idle now (an early worker went idle under the default).
    onIdleMsChange(() => {
      const oldest = this.idle[0];
      if (oldest) this.scheduleSweep(oldest.idleSince + sandboxIdleMs());
    });
  }

  /**
   * Starts one worker when none is started or starting: it is counted like any other (so the bound holds), the
   * first run that finds no idle worker takes it, and until then it does not keep the process alive. Never
   * throws: a failure is forgotten, and the next run starts a worker as if nothing had been tried.
   */
  prewarm(): void {
    if (this.warming !== undefined || sandboxWorkersStarted() > 0) return;
    countStarted(1);
    const warming: Warming = { worker: undefined, taken: false, ready: Promise.resolve(undefined) };
    warming.ready = startEarly(warming);
    this.warming = warming;
    void warming.ready.then((w) => {
      if (warming.taken) return;
      this.warming = undefined;
      if (w) this.release(w);
    });
  }

  /** The early worker for a run, once ready; `undefined` when it failed (as if never tried). */
  private async takeWarm(): Promise<SandboxWorker | undefined> {
    const warming = this.warming;
    if (!warming) return undefined;
    this.warming = undefined;
    warming.taken = true;
    warming.worker?.ref();
    const w = await warming.ready;
    if (!w) return undefined;
    if (w.alive) return w;
    countStarted(-1); // died before its first run
    return undefined;
  }

  async run(job: SandboxJob, handler: HostHandler, nested: boolean): Promise<SandboxOutcome> {
    const worker = await this.acquire(nested);
    try {
      return await worker.run(job, handler);
    } finally {
      this.release(worker);
    }
  }

  private async acquire(nested: boolean): Promise<SandboxWorker> {
    for (let w = this.idle.pop(); w; w = this.idle.pop()) {
      if (w.alive) return w;
      countStarted(-1); // died while idle
    }
    if (this.warming) {
      const warm = await this.takeWarm();
      if (warm) return warm;
    }
    if (sandboxWorkersStarted() >= sandboxWorkers() && !nested) {
      return new Promise((resolve) => this.waiting.push(resolve));
    }
    countStarted(1);
    try {
      const w = spawn(await loadBoot());
      await w.ready;
      return w;
    } catch (cause) {
      countStarted(-1);
      if (cause instanceof EngineError) throw cause;
      throw new EngineError('ENGINE_SANDBOX_FAILED', 'the sandbox could not start', { cause });
    }
  }

  private release(w: SandboxWorker): void {
    if (!w.alive) {
      countStarted(-1);
      this.replaceFor(this.waiting.shift());
      return;
    }
    const next = this.waiting.shift();
    if (next) return next(w);
    if (this.idle.length >= sandboxWorkers()) {
      countStarted(-1);
      void w.terminate();
      return;
    }
    w.unref();
    w.idleSince = Date.now();
    this.idle.push(w);
    this.scheduleSweep(w.idleSince + sandboxIdleMs());
  }

  /** Makes sure a check runs by `at` (a check due earlier is kept; the idle time may have been shortened). */
  private scheduleSweep(at: number): void {
    if (sandboxIdleMs() === 0 || (this.sweep && this.sweepAt <= at)) return;
    if (this.sweep) clearTimeout(this.sweep);
    this.sweepAt = at;
    this.sweep = setTimeout(() => this.endIdle(), Math.max(0, at - Date.now()));
    this.sweep.unref();
  }

  /** Ends the workers idle for {@link sandboxIdleMs} or longer (the least recently used first). */
  private endIdle(): void {
    this.sweep = undefined;
    const limit = sandboxIdleMs();
    if (limit === 0) return;
    const now = Date.now();
    for (let w = this.idle[0]; w && now - w.idleSince >= limit; w = this.idle[0]) {
      this.idle.shift();
      countStarted(-1);
      if (w.alive) void w.terminate();
    }
    const oldest = this.idle[0];
    if (oldest) this.scheduleSweep(oldest.idleSince + limit);
  }

  /** A dead worker's place goes to the next waiting run, on a new worker. */
  private replaceFor(waiter: ((w: SandboxWorker) => void) | undefined): void {
    if (!waiter) return;
    this.acquire(true).then(waiter, () => this.waiting.unshift(waiter));
  }
}

const pool = new SandboxPool();

/**
 * Starts a sandbox worker ahead of the first run, so that run does not wait for the QuickJS wasm to compile and a
 * worker thread to start and set up its sandbox (≈ 0.1–0.3 s, longer on a busy machine). It runs on its own
 * thread while the caller goes on (loading its modules, reading its configuration). One worker, only when none is
 * started or starting, and it counts towards the bound of `setSandboxWorkers`; it does not keep the process
 * alive, and unused it ends after the time of `setSandboxIdleMs` like any idle worker. Never throws and never
 * rejects: a failure is forgotten, and the first run starts a worker as it would have.
 */
export function prewarmSandbox(): void {
  try {
    pool.prewarm();
  } catch {
    // Forgotten: the first run tries again.
  }
}

/**
 * Runs one processor script in a hardened QuickJS realm (ADR 0042) on a pooled worker thread.
 *
 * @throws EngineError `ENGINE_TIMEOUT`, `ENGINE_MEMORY`, `ENGINE_SANDBOX_FAILED`.
 */
export function runInSandbox(
  job: SandboxJob,
  handler: HostHandler,
  nested: boolean,
): Promise<SandboxOutcome> {
  return pool.run(job, handler, nested);
}
