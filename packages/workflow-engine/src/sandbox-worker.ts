import { receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { ByteChunks } from './byte-stream.js';
import { EarlyAnswer } from './early-answer.js';
import { EngineError } from './errors.js';
import type { HostCallMessage, HostReply, SandboxJob, WorkerResult } from './sandbox/protocol.js';

export type { SandboxJob } from './sandbox/protocol.js';

/** Extra wall time before a worker that ignores its interrupt deadline is terminated. */
const WATCHDOG_GRACE_MS = 1000;

/** What a finished run returns; `scriptError` is set when the script threw. */
export interface SandboxOutcome {
  output: string;
  outBytes: Uint8Array | undefined;
  scriptError: { name: string; message: string } | undefined;
  /**
   * The error text of a write-buffer batch the host stored after answering (the last batch, applied as the run
   * ended, or a flush answered first, ADR 0123), if one failed: the first such error.
   */
  lastWrites: Promise<string | undefined> | undefined;
}

/** Answers one host call from the sandbox: a JSON-able value, bytes, or a thrown error. */
export type HostHandler = (
  op: string,
  json: string,
  bytes: Uint8Array | undefined,
  text: string | undefined,
) => Promise<unknown>;

interface Pending {
  resolve: (o: SandboxOutcome) => void;
  reject: (e: EngineError) => void;
  handler: HostHandler;
  lastWrites?: Promise<string | undefined>;
  /** The error of the rest of a call answered first ({@link EarlyAnswer}), the first one. */
  lateError?: string;
}

function isOutOfMemory(e: { message: string } | undefined): boolean {
  return e !== undefined && /out of memory/i.test(e.message);
}

/** A worker thread running QuickJS, with its host-call channel and watchdog. */
export class SandboxWorker {
  readonly ready: Promise<void>;
  alive = true;
  /** When the pool last put this worker aside as idle (`Date.now()`). */
  idleSince = 0;
  private readonly worker: Worker;
  private readonly flag: Int32Array;
  private pending: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  private budgetMs = 0;
  private armedAt = 0;

  /** Buffers of earlier stream reads the worker gave back, reused for the next reads of the same size. */
  private readonly spares: ArrayBuffer[] = [];

  constructor(
    make: () => Worker,
    private readonly port: MessagePort,
    signal: SharedArrayBuffer,
  ) {
    this.flag = new Int32Array(signal);
    this.worker = make();
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', (m: WorkerResult) =>
        m.kind === 'ready' ? resolve() : reject(new Error(m.message ?? 'boot failed')),
      );
      this.worker.once('error', reject);
    });
    this.worker.on('message', (m: WorkerResult) => this.onResult(m));
    this.worker.on('error', (e: Error & { code?: string }) => this.onDeath(e.code));
    this.worker.on('exit', () => this.onDeath(undefined));
    this.port.on('message', (m: HostCallMessage) => this.onHostCall(m));
  }

  /** Runs one job; only one at a time per worker. */
  run(job: SandboxJob, handler: HostHandler): Promise<SandboxOutcome> {
    this.worker.ref();
    this.port.ref();
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, handler };
      this.budgetMs = job.timeMs + WATCHDOG_GRACE_MS;
      this.arm();
      this.worker.postMessage(job);
    });
  }

  /** Keeps the process alive while a run waits for this worker to be ready (undoes {@link unref}). */
  ref(): void {
    this.worker.ref();
    this.port.ref();
  }

  /** Lets the process exit while this worker sits idle in the pool. */
  unref(): void {
    this.worker.unref();
    this.port.unref();
  }

  async terminate(): Promise<void> {
    this.alive = false;
    this.disarm();
    this.port.close();
    await this.worker.terminate();
  }

  private arm(): void {
    this.armedAt = Date.now();
    this.timer = setTimeout(() => this.onWatchdog(), Math.max(0, this.budgetMs));
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.budgetMs -= Date.now() - this.armedAt;
  }

  private settle(fn: (p: Pending) => void): void {
    const p = this.pending;
    this.pending = undefined;
    this.disarm();
    if (p) fn(p);
  }

  private onWatchdog(): void {
    this.settle((p) => p.reject(new EngineError('ENGINE_TIMEOUT', 'the script exceeded its time limit')));
    void this.terminate();
  }

  private onDeath(code: string | undefined): void {
    this.alive = false;
    this.settle((p) =>
      p.reject(
        code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new EngineError('ENGINE_MEMORY', 'the script exceeded its memory limit')
          : new EngineError('ENGINE_SANDBOX_FAILED', 'the sandbox worker stopped'),
      ),
    );
  }

  private onResult(m: WorkerResult): void {
    if (m.kind === 'ready') return;
    // A one-way call posted before the result (the write buffer's last batch) is handled first: it comes on the
    // other port, whose messages may not have been dispatched yet.
    for (let got = receiveMessageOnPort(this.port); got; got = receiveMessageOnPort(this.port))
      this.onHostCall(got.message as HostCallMessage);
    this.settle((p) => {
      if (m.interrupted)
        return p.reject(new EngineError('ENGINE_TIMEOUT', 'the script exceeded its time limit'));
      if (isOutOfMemory(m.error) || isOutOfMemory(m.scriptError)) {
        return p.reject(new EngineError('ENGINE_MEMORY', 'the script exceeded its memory limit'));
      }
      if (m.kind === 'fail' || m.output === undefined) {
        return p.reject(new EngineError('ENGINE_SANDBOX_FAILED', 'the sandbox could not finish the run'));
      }
      p.resolve({
        output: m.output,
        outBytes: m.outBytes,
        scriptError: m.scriptError,
        lastWrites: p.lateError !== undefined ? Promise.resolve(p.lateError) : p.lastWrites,
      });
    });
  }

  private onHostCall(m: HostCallMessage): void {
    // At most two kept: a run reads in one size, or in a few; anything else is garbage-collected as usual.
    if (m.spare instanceof ArrayBuffer && this.spares.length < 2) this.spares.push(m.spare);
    const p = this.pending;
    if (!p) return;
    if (m.oneWay) {
      p.lastWrites = p.handler(m.op, m.args.json, m.args.bytes, m.args.text).then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
      return;
    }
    this.disarm();
    p.handler(m.op, m.args.json, m.args.bytes, m.args.text).then(
      (value) =>
        value instanceof ByteChunks
          ? this.replyBytes(value)
          : value instanceof EarlyAnswer
            ? this.replyFirst(p, value)
            : this.reply({ value }),
      (err: unknown) => this.reply({ error: err instanceof Error ? err.message : String(err) }),
    );
  }

  /** The answer goes back at once; the rest of the call is done right after, and its error kept for the run's end. */
  private replyFirst(p: Pending, a: EarlyAnswer): void {
    this.reply({ value: a.value });
    try {
      a.rest();
    } catch (err) {
      p.lateError ??= err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * Stream bytes are moved (transferred), not cloned. Chunks the stream owns outright (`ByteChunks.owned`) go as
   * they are, their buffers moved, and the worker copies them straight into the sandbox: no copy on this thread.
   * Others are copied into a buffer of exactly their size, which the worker gives back with its next call, so a
   * long run of equal reads allocates nothing.
   */
  private replyBytes(b: ByteChunks): void {
    const owned = b.byteLength > 0 ? b.buffers() : undefined;
    if (owned) {
      try {
        return this.reply({ parts: b.chunks as Uint8Array[], stream: true }, owned);
      } catch {
        // A buffer that cannot be moved (DataCloneError, thrown before anything is detached): copied below.
      }
    }
    const i = this.spares.findIndex((x) => x.byteLength === b.byteLength);
    const bytes = i < 0 ? b.concat() : new Uint8Array(this.spares.splice(i, 1)[0]!);
    if (i >= 0) b.copyTo(bytes);
    this.reply({ value: bytes, stream: true }, [bytes.buffer]);
  }

  private reply(msg: HostReply, transfer: ArrayBuffer[] = []): void {
    if (!this.pending || !this.alive) return;
    this.port.postMessage(msg, transfer);
    Atomics.store(this.flag, 0, 1);
    Atomics.notify(this.flag, 0);
    this.arm();
  }
}
