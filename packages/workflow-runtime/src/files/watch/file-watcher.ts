import { watch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import type { StepInfo, WorkflowEngine } from '@org/workflow-engine';
import { isCodedError } from '../../errors.js';
import type { HttpRunCounters } from '../../http/http-runs.js';
import { reportedRun } from '../../reported-run.js';
import type { RunTracker } from '../../http/run-tracker.js';
import type { Output } from '../../output.js';
import { resolveAccess, type FileAccess } from '../access.js';
import { lstatChild, withDir, type Dir } from '../confined.js';
import type { FileLimits } from '../limits.js';
import type { FileOffset, OffsetStore } from './offsets.js';
import { FileTail, type SplitSettings } from './tail.js';

/** One `fileWatcher` trigger, checked at start-up (triggers.ts). */
export interface WatchSpec {
  readonly deploymentId: string;
  readonly step: StepInfo;
  readonly access: FileAccess;
  /** The trigger's own `patterns` (anchored), on top of the entry's. */
  readonly patterns: readonly RegExp[];
  readonly split: SplitSettings;
  readonly noTrace: boolean;
}

export interface WatcherDeps {
  readonly engine: WorkflowEngine;
  readonly tracker: RunTracker;
  readonly output: Output;
  readonly limits: FileLimits;
  readonly offsets: OffsetStore;
  /** Counts each run (the runtime's `step counters`). */
  readonly runs?: HttpRunCounters | undefined;
  readonly now?: () => number;
}

/** Messages waiting for one run, and the bytes of the file they cover. */
interface Batch {
  messages: string[];
  chars: number;
  bytes: number;
}

const newBatch = (): Batch => ({ messages: [], chars: 0, bytes: 0 });

/**
 * Follows the files of one `fileWatcher` trigger (ADR 0073): `fs.watch` on the directory for low latency and a
 * poll every `watchPollMs` that finds what change events miss (and everything when `fs.watch` cannot run). Every
 * check is the same scan: list the directory, follow each matching regular file by identity, read what was
 * appended, cut it into events and run the step once per bounded batch, one run at a time. A file renamed away
 * or deleted is read to its end through the handle still open; a file smaller than its read offset was
 * truncated and is read again from the start. Delivered offsets are saved after each run.
 */
export class FileWatcher {
  readonly #spec: WatchSpec;
  readonly #deps: WatcherDeps;
  readonly #tails = new Map<string, FileTail>();
  readonly #saved = new Map<string, FileOffset>();
  #fsWatcher: FSWatcher | undefined;
  #watchFailed = false;
  #timer: NodeJS.Timeout | undefined;
  #scanning: Promise<void> | undefined;
  #again = false;
  #started = false;
  #stopped = false;
  #lastProblem: string | undefined;
  #problemThisScan = false;

  constructor(spec: WatchSpec, deps: WatcherDeps) {
    this.#spec = spec;
    this.#deps = deps;
    for (const o of deps.offsets.load()) this.#saved.set(`${o.dev}:${o.ino}`, o);
  }

  get #fields() {
    return { deploymentId: this.#spec.deploymentId, stepId: this.#spec.step.stepId, trigger: 'fileWatcher' };
  }

  #now(): number {
    return (this.#deps.now ?? Date.now)();
  }

  /** The deployment and step this watcher runs. */
  get deploymentId(): string {
    return this.#spec.deploymentId;
  }

  get stepId(): string {
    return this.#spec.step.stepId;
  }

  /** True once {@link start} ran (and until the runtime stops). */
  get started(): boolean {
    return this.#started && !this.#stopped;
  }

  /** Follows the files from now on, beginning with a scan; a second call does nothing. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#timer = setInterval(() => void this.scan(), this.#deps.limits.watchPollMs);
    void this.scan();
  }

  /** Stops timers and change events; a scan in flight stops at its next batch. */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#fsWatcher?.close();
    this.#fsWatcher = undefined;
  }

  /** After {@link stop}: waits for the scan in flight, then closes every file. */
  async close(): Promise<void> {
    await this.#scanning;
    for (const t of this.#tails.values()) await t.close();
  }

  /** Checks the files now (a change event, the poll, tests); concurrent calls coalesce into one more scan. */
  scan(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#scanning !== undefined) {
      this.#again = true;
      // The scan in flight may already be past its last pass (its run tracked as done, `#scanning` not yet
      // cleared): then this request starts one more, instead of being lost until the next poll.
      return this.#scanning.then(() => (this.#again ? this.scan() : this.#scanning));
    }
    this.#scanning = this.#deps.tracker
      .track(async () => {
        do {
          this.#again = false;
          this.#problemThisScan = false;
          await this.#scanOnce().catch((err: unknown) => this.#problem(err));
          if (!this.#problemThisScan) this.#lastProblem = undefined;
        } while (this.#again && !this.#stopped);
      })
      .finally(() => (this.#scanning = undefined));
    return this.#scanning;
  }

  #problem(err: unknown): void {
    this.#problemThisScan = true;
    const code = isCodedError(err) ? err.code : 'AGENT_FILE_FAILED';
    // One line per change of problem, not one per poll.
    if (code !== this.#lastProblem) this.#deps.output.warn('file watcher failed', { ...this.#fields, code });
    this.#lastProblem = code;
  }

  #attach(dir: string): void {
    if (this.#fsWatcher !== undefined || this.#watchFailed || this.#stopped || !this.#deps.limits.watchEvents)
      return;
    try {
      this.#fsWatcher = watch(dir, { persistent: false }, () => void this.scan());
      this.#fsWatcher.on('error', () => {
        this.#fsWatcher?.close();
        this.#fsWatcher = undefined;
      });
    } catch {
      // inotify limits, unsupported file systems: the poll alone follows the files.
      this.#watchFailed = true;
      this.#deps.output.info('file watcher polling', {
        ...this.#fields,
        pollMs: this.#deps.limits.watchPollMs,
      });
    }
  }

  /** A top-level name is followed when the entry's patterns and the trigger's both allow it (any of each). */
  #matches(name: string): boolean {
    const ok = (list: readonly RegExp[]) => list.length === 0 || list.some((re) => re.test(name));
    return ok(this.#spec.access.patterns) && ok(this.#spec.patterns);
  }

  async #scanOnce(): Promise<void> {
    const where = resolveAccess(this.#spec.access);
    if (where === undefined) return; // not there (yet): the poll looks again
    this.#attach(where.dir);
    const what = `fileWatcher of step "${this.#spec.step.stepId}"`;
    await withDir(where.dir, [], what, async (dir) => {
      const names =
        where.fileName !== undefined
          ? [where.fileName]
          : (await readdir(dir.path)).filter((n) => this.#matches(n));
      const seen = await this.#discover(dir, names.sort());
      for (const [key, tail] of this.#tails) {
        if (seen.has(key) || this.#stopped) continue;
        await this.#follow(tail, true); // renamed away or deleted: read to its end, then let go
        await tail.close();
        this.#tails.delete(key);
        this.#save();
      }
      for (const tail of this.#tails.values()) {
        if (this.#stopped) break;
        if (await tail.open(dir, `${what} file ${JSON.stringify(tail.name)}`))
          await this.#follow(tail, false);
      }
    });
  }

  /** The identities of the matching regular files; new ones become tails (from a saved offset or the start). */
  async #discover(dir: Dir, names: readonly string[]): Promise<Set<string>> {
    const seen = new Set<string>();
    for (const name of names) {
      const st = await lstatChild(dir, name, 'fileWatcher');
      if (st === undefined || !st.isFile() || st.nlink !== 1n) continue;
      const key = `${st.dev}:${st.ino}`;
      seen.add(key);
      const known = this.#tails.get(key);
      if (known !== undefined) {
        known.name = name;
        continue;
      }
      if (this.#tails.size >= this.#deps.limits.watchedFiles) {
        this.#problem({ name: 'AgentError', code: 'AGENT_FILE_TOO_LARGE', message: 'too many files' });
        continue;
      }
      const saved = this.#saved.get(key)?.offset ?? 0;
      const offset = saved <= Number(st.size) ? saved : 0;
      this.#tails.set(key, new FileTail(key, st.ino, name, offset, this.#spec.split, this.#now()));
    }
    return seen;
  }

  async #follow(tail: FileTail, last: boolean): Promise<void> {
    let batch = newBatch();
    const add = async (events: readonly string[]) => {
      const l = this.#deps.limits;
      for (const message of events) {
        // A batch holds at most batchMessages and batchChars (or one longer message).
        if (batch.messages.length > 0 && batch.chars + message.length > l.batchChars) {
          await this.#deliver(tail, batch);
          batch = newBatch();
        }
        batch.messages.push(message);
        batch.chars += message.length;
        batch.bytes += Buffer.byteLength(message, 'utf8');
        if (batch.messages.length >= l.batchMessages) {
          await this.#deliver(tail, batch);
          batch = newBatch();
        }
      }
    };
    const size = await tail.size();
    if (size < tail.readOffset) {
      await add(tail.flush());
      await this.#deliver(tail, batch);
      batch = newBatch();
      tail.restart();
      this.#deps.output.debug('watched file truncated', { ...this.#fields, file: tail.name });
    }
    for (;;) {
      if (this.#stopped) return;
      const { events, bytes } = await tail.read();
      if (bytes === 0) break;
      tail.lastGrowth = this.#now();
      await add(events);
    }
    const idle = this.#now() - tail.lastGrowth >= this.#deps.limits.watchIdleFlushMs;
    if (last || (idle && !this.#spec.split.splitAtEnd && tail.pendingChars > 0)) await add(tail.flush());
    await this.#deliver(tail, batch);
  }

  /** One step run for one batch; the offset moves on whatever the run's outcome (README "fileWatcher"). */
  async #deliver(tail: FileTail, batch: Batch): Promise<void> {
    if (batch.messages.length === 0) return;
    const { engine, tracker, output } = this.#deps;
    const body = JSON.stringify(batch.messages.map((message) => ({ message })));
    await reportedRun(
      { tracker, output, runs: this.#deps.runs },
      { ...this.#fields, file: tail.name },
      () =>
        engine.runStep(this.#spec.step, {
          body,
          stream: undefined,
          headers: {},
          properties: { 'file.name': tail.name },
        }),
      { noTrace: this.#spec.noTrace, trace: { messages: batch.messages.length } },
    );
    tail.delivered += batch.bytes;
    this.#save();
  }

  #save(): void {
    const files: FileOffset[] = [...this.#tails.values()].map((t) => {
      const [dev = '', ino = ''] = t.key.split(':');
      return { dev, ino, name: t.name, offset: t.delivered };
    });
    try {
      this.#deps.offsets.save(files);
    } catch (err) {
      this.#problem(err);
    }
  }
}
