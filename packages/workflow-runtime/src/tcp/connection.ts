import { isUtf8 } from 'node:buffer';
import type { Socket } from 'node:net';
import type { RepeatLimiter, StepInput, WorkflowEngine } from '@org/workflow-engine';
import { isCodedError } from '../errors.js';
import type { HttpRunCounters } from '../http/http-runs.js';
import type { RunTracker } from '../http/run-tracker.js';
import type { Output } from '../output.js';
import { createFramer, FrameTooLargeError, type Framer } from './framing.js';
import type { TcpLimits } from './limits.js';
import type { TcpRoute } from './triggers.js';

/** Run properties of a `tcp`-triggered step (its body is the JSON array of messages). */
export const TCP_PROPERTIES = {
  server: 'tcp.server',
  remoteAddress: 'tcp.remoteAddress',
  remotePort: 'tcp.remotePort',
  messages: 'tcp.messages',
} as const;

/** A failed or errored run, for the server's rate-limited `step errored` lines. */
export interface TcpRunFailure {
  readonly outcome: 'errored' | 'failed';
  readonly text: string;
}

/** Step runs in flight on one server: a FIFO semaphore. */
export class RunSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

/** What every connection of one server shares. */
export interface TcpServerShared {
  readonly route: TcpRoute;
  readonly engine: WorkflowEngine;
  readonly limits: TcpLimits;
  readonly output: Output;
  readonly tracker: RunTracker;
  /** Counts each run (the runtime's `step counters`). */
  readonly runs?: HttpRunCounters | undefined;
  readonly slots: RunSlots;
  readonly failures: RepeatLimiter<TcpRunFailure>;
}

/**
 * What one queued message costs beyond its bytes (its buffer and queue entry), counted against
 * `maxQueuedBytes` so that a stream of tiny messages is bounded too.
 */
export const QUEUED_MESSAGE_OVERHEAD_BYTES = 128;

const cost = (q: { bytes: Buffer }): number => q.bytes.length + QUEUED_MESSAGE_OVERHEAD_BYTES;

interface Queued {
  readonly bytes: Buffer;
  readonly at: number;
}

/** A message as the step sees it: its text when it is UTF-8, else its bytes in base64. */
function messageOf(frame: Buffer): { message: string } | { messageBase64: string } {
  return isUtf8(frame) ? { message: frame.toString('utf8') } : { messageBase64: frame.toString('base64') };
}

/**
 * One client connection of a `tcp` trigger server (ADR 0080): frames the bytes, queues messages, runs one
 * batch at a time in arrival order. Reading pauses while `maxQueuedBytes` are waiting; a message over
 * `maxFrameBytes` closes the connection; a connection with nothing to do is closed after `idleMs`.
 */
export class TcpConnection {
  readonly #socket: Socket;
  readonly #s: TcpServerShared;
  readonly #framer: Framer;
  readonly #queue: Queued[] = [];
  #queuedBytes = 0;
  #running = false;
  #paused = false;
  #ended = false;
  #window: NodeJS.Timeout | undefined;
  #onGone: (() => void) | undefined;

  /** `onGone` runs once, when the connection closes or this side destroys it (whichever is first). */
  constructor(socket: Socket, shared: TcpServerShared, onGone: () => void) {
    this.#socket = socket;
    this.#s = shared;
    this.#onGone = onGone;
    this.#framer = createFramer(shared.route.framing, shared.limits.maxFrameBytes);
    socket.setTimeout(shared.limits.idleMs);
    socket.on('timeout', () => this.#onIdle());
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('end', () => this.#onEnd());
    socket.on('error', () => undefined); // a reset client: 'close' follows
    socket.on('close', () => {
      this.#gone();
      this.#ended = true;
      clearTimeout(this.#window);
      this.#pump();
    });
  }

  /** True when nothing is queued or running (closing it loses nothing). */
  get isIdle(): boolean {
    return !this.#running && this.#queue.length === 0;
  }

  /** Closes the connection and drops what is queued (shutdown); a batch already running goes on. */
  destroy(): void {
    for (const q of this.#queue.splice(0)) this.#queuedBytes -= cost(q);
    this.#close();
  }

  /** node:net frees the server's connection slot at destroy(), before 'close': so does the server's count. */
  #close(): void {
    this.#gone();
    this.#socket.destroy();
  }

  #gone(): void {
    const f = this.#onGone;
    this.#onGone = undefined;
    f?.();
  }

  #fields() {
    return { deploymentId: this.#s.route.deploymentId, server: this.#s.route.serverId };
  }

  #onIdle(): void {
    if (!this.isIdle) return; // re-armed when the work is done
    this.#s.output.debug('tcp connection closed', { ...this.#fields(), reason: 'idle' });
    this.#close();
  }

  #onData(chunk: Buffer): void {
    try {
      this.#enqueue(this.#framer.push(chunk));
    } catch (err) {
      if (!(err instanceof FrameTooLargeError)) throw err;
      // S150: nothing more is read; complete messages already queued still run.
      this.#s.output.warn('tcp connection closed', {
        ...this.#fields(),
        reason: 'message over maxFrameBytes',
      });
      this.#close();
      return;
    }
    if (!this.#paused && this.#queuedBytes + this.#framer.pendingBytes >= this.#s.limits.maxQueuedBytes) {
      this.#paused = true;
      this.#socket.pause();
    }
    this.#pump();
  }

  #onEnd(): void {
    this.#ended = true;
    try {
      const last = this.#framer.flush();
      if (last !== undefined) this.#enqueue([last]);
    } catch {
      this.#s.output.warn('tcp connection closed', {
        ...this.#fields(),
        reason: 'message over maxFrameBytes',
      });
    }
    this.#pump();
  }

  #enqueue(frames: Buffer[]): void {
    const at = performance.now();
    for (const bytes of frames) {
      this.#queue.push({ bytes, at });
      this.#queuedBytes += cost({ bytes });
    }
  }

  /** Runs the next batch when it is full, its window passed, or no more input can come. */
  #pump(): void {
    if (this.#running || this.#queue.length === 0) return;
    const { batchSize, batchWindowMs } = this.#s.route;
    const waited = performance.now() - this.#queue[0]!.at;
    if (this.#queue.length < batchSize && !this.#ended && waited < batchWindowMs) {
      this.#window ??= setTimeout(() => {
        this.#window = undefined;
        this.#pump();
      }, batchWindowMs - waited);
      return;
    }
    clearTimeout(this.#window);
    this.#window = undefined;
    const batch = this.#queue.splice(0, batchSize);
    this.#running = true;
    void this.#run(batch).finally(() => this.#afterRun(batch));
  }

  #afterRun(batch: Queued[]): void {
    this.#running = false;
    for (const q of batch) this.#queuedBytes -= cost(q);
    const low = this.#queuedBytes + this.#framer.pendingBytes < this.#s.limits.maxQueuedBytes / 2;
    if (this.#paused && low) {
      this.#paused = false;
      this.#socket.resume();
    }
    if (this.isIdle && !this.#socket.destroyed) this.#socket.setTimeout(this.#s.limits.idleMs);
    this.#pump();
  }

  async #run(batch: Queued[]): Promise<void> {
    const { route, engine, tracker, output, slots } = this.#s;
    await slots.acquire();
    try {
      const input: StepInput = {
        body: JSON.stringify(batch.map((q) => messageOf(q.bytes))),
        stream: undefined,
        headers: {},
        properties: {
          [TCP_PROPERTIES.server]: route.serverId,
          [TCP_PROPERTIES.remoteAddress]: this.#socket.remoteAddress ?? '',
          [TCP_PROPERTIES.remotePort]: String(this.#socket.remotePort ?? ''),
          [TCP_PROPERTIES.messages]: String(batch.length),
        },
      };
      const started = performance.now();
      let failure: TcpRunFailure | undefined;
      const done = this.#s.runs?.start(route.deploymentId, route.step.stepId);
      const result = await tracker
        .track(() => engine.runStep(route.step, input))
        .catch((err: unknown) => {
          failure = { outcome: 'failed', text: isCodedError(err) ? err.code : 'INTERNAL' };
          return undefined;
        });
      if (result?.errored === true) failure = { outcome: 'errored', text: result.errors.join('; ') };
      done?.(failure !== undefined);
      if (failure !== undefined) {
        const now = Date.now();
        this.#s.failures.flush(now);
        this.#s.failures.submit(`${failure.outcome}\u0000${failure.text}`, failure, now);
      }
      if (!route.noTrace)
        output.debug('step run', {
          ...this.#fields(),
          stepId: route.step.stepId,
          trigger: 'tcp',
          messages: batch.length,
          durationMs: Math.round(performance.now() - started),
          outcome: failure?.outcome ?? 'ok',
        });
    } finally {
      slots.release();
    }
  }
}
