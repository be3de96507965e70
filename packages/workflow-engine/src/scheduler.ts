import { codeOf } from './errors.js';
import { RepeatLimiter } from './repeat-limiter.js';
import { planSchedule, type ScheduledKind, type ScheduledStep } from './schedule-plan.js';
import type { StepInfo, StepRef } from './types.js';

/** Time as the scheduler sees it; tests inject a fake one. `now` must not go backwards. */
export interface SchedulerClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Uniform in [0, 1), for `staggerPct`. */
  random(): number;
}

/** What one scheduled run produced (a `StepResult` is one). */
export interface RunOutcome {
  readonly errored: boolean;
  readonly errors: readonly string[];
}

/** One finished scheduled run. */
export interface RunReport {
  readonly stepId: string;
  readonly kind: ScheduledKind;
  readonly durationMs: number;
  /** `errored`: the run resolved with errors; `failed`: it rejected (`code`, e.g. `ENGINE_TIMEOUT`). */
  readonly outcome: 'ok' | 'errored' | 'failed';
  readonly errors: readonly string[];
  readonly code: string | undefined;
  /** The trigger asked for no trace (`runOnceNoTrace`, `timer.noTrace`). */
  readonly noTrace: boolean;
}

/** A failed or errored run, rate-limited: `repeated` 0 is a first occurrence, N > 0 a summary of N more. */
export interface ErrorReport extends RunReport {
  readonly repeated: number;
}

/** A timer tick that did not start a run (the step had `maxTimerConcurrency` runs in flight, or ticks were missed). */
export interface SkipReport {
  readonly stepId: string;
  /** Ticks skipped by this event (≥ 1) and in total for the step. */
  readonly skipped: number;
  readonly skippedTicks: number;
  readonly running: number;
}

/** Per-step counters of scheduled runs. */
export interface StepCounters {
  readonly stepId: string;
  /** Runs started. */
  readonly runs: number;
  /** Runs that ended errored or failed. */
  readonly errors: number;
  readonly skippedTicks: number;
  /** Runs in flight now. */
  readonly running: number;
}

/** Options of {@link createScheduler}. */
export interface SchedulerOptions {
  /** The engine's steps (`engine.steps`); only `runOnce`, `runOnceNoTrace` and `timer` triggers are used. */
  readonly steps: readonly StepInfo[];
  /** Runs one step (e.g. `engine.runStep(step, emptyInput)`: the step itself, ADR 0060). May reject. */
  readonly run: (step: StepRef, kind: ScheduledKind) => Promise<RunOutcome>;
  /** Default: {@link systemClock}. */
  readonly clock?: SchedulerClock | undefined;
  /** `workflow.maxTimerConcurrency`: runs of one step in flight at once; null/undefined → 1 (ADR 0056). */
  readonly maxTimerConcurrency?: number | null | undefined;
  /** `workflow.timers.staggerPct` (0–100, default 0): one random start delay of up to this % of the period. */
  readonly staggerPct?: number | undefined;
  /** Window of the identical-error rate limit, ms. Default {@link DEFAULT_ERROR_REPEAT_INTERVAL_MS}. */
  readonly errorRepeatIntervalMs?: number | undefined;
  readonly onRun?: ((r: RunReport) => void) | undefined;
  readonly onError?: ((r: ErrorReport) => void) | undefined;
  readonly onSkip?: ((r: SkipReport) => void) | undefined;
}

/** Runs a workflow's `runOnce` and `timer` triggers until stopped. */
export interface Scheduler {
  /** The triggers it runs. */
  readonly steps: readonly ScheduledStep[];
  /** Starts `runOnce` runs (at once) and timers (after delay + stagger). Idempotent; a stopped one stays stopped. */
  start(): void;
  /** Clears every timer and emits pending error summaries; runs in flight go on (the caller drains them). */
  stop(): void;
  counters(): StepCounters[];
}

/** Default window of the identical-error rate limit. */
export const DEFAULT_ERROR_REPEAT_INTERVAL_MS = 60_000;
/** Longest single wait handed to `clock.setTimeout` (Node's timer limit); longer waits are chained. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Real timers (they keep the process alive) and a monotonic clock. */
export function systemClock(): SchedulerClock {
  return {
    now: () => performance.now(),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    random: Math.random,
  };
}

function checkOptions(o: SchedulerOptions): { max: number; stagger: number; interval: number } {
  const max = o.maxTimerConcurrency ?? 1;
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`maxTimerConcurrency must be an integer ≥ 1 or null, got ${String(max)}`);
  }
  const stagger = o.staggerPct ?? 0;
  if (typeof stagger !== 'number' || !(stagger >= 0 && stagger <= 100)) {
    throw new RangeError(`staggerPct must be a number from 0 to 100, got ${String(stagger)}`);
  }
  const interval = o.errorRepeatIntervalMs ?? DEFAULT_ERROR_REPEAT_INTERVAL_MS;
  if (!Number.isFinite(interval) || interval <= 0) {
    throw new RangeError(`errorRepeatIntervalMs must be a positive number, got ${String(interval)}`);
  }
  return { max, stagger, interval };
}

interface Slot {
  readonly step: ScheduledStep;
  runs: number;
  errors: number;
  skippedTicks: number;
  running: number;
  /** Clock time the next timer tick is due. */
  dueAt: number;
  handle: unknown;
}

/** Why a run ended the way it did: the error key of the rate limit. */
function errorKey(r: RunReport): string {
  return `${r.stepId}\u0000${r.outcome}\u0000${r.code ?? ''}\u0000${r.errors.join('\u0000')}`;
}

/**
 * Creates the scheduler of one deployment (ADR 0056). Semantics: `runOnce` runs once at {@link Scheduler.start};
 * a timer first fires after `delay` (default: one `period`) plus a one-time stagger, then at a fixed rate of
 * `period` measured from its first due time. A tick that finds the step with `maxTimerConcurrency` runs in flight
 * is skipped (counted, never queued); ticks missed because the process was stalled are skipped too. Failures
 * never stop the schedule; identical failures are reported once per window.
 *
 * @throws RangeError for an out-of-range `maxTimerConcurrency`, `staggerPct` or `errorRepeatIntervalMs`.
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { max, stagger, interval } = checkOptions(options);
  const clock = options.clock ?? systemClock();
  const plan = planSchedule(options.steps).steps;
  const slots = plan.map((step): Slot => ({
    step,
    runs: 0,
    errors: 0,
    skippedTicks: 0,
    running: 0,
    dueAt: 0,
    handle: undefined,
  }));
  let state: 'idle' | 'started' | 'stopped' = 'idle';
  let flushHandle: unknown;
  const limiter = new RepeatLimiter<RunReport>({
    intervalMs: interval,
    emit: (r, repeated) => options.onError?.({ ...r, repeated }),
  });

  function armFlush(): void {
    if (flushHandle !== undefined || state !== 'started') return;
    const at = limiter.nextFlushAt();
    if (at === undefined) return;
    flushHandle = clock.setTimeout(
      () => {
        flushHandle = undefined;
        limiter.flush(clock.now());
        armFlush();
      },
      Math.min(MAX_TIMEOUT_MS, Math.max(0, at - clock.now())),
    );
  }

  function finish(slot: Slot, kind: ScheduledKind, started: number, outcome: Partial<RunReport>): void {
    slot.running--;
    const report: RunReport = {
      stepId: slot.step.stepId,
      kind,
      durationMs: Math.max(0, clock.now() - started),
      outcome: 'ok',
      errors: [],
      code: undefined,
      noTrace: slot.step.noTrace[kind],
      ...outcome,
    };
    if (report.outcome !== 'ok') slot.errors++;
    options.onRun?.(report);
    if (report.outcome === 'ok') return;
    // After stop() nothing would flush a summary: a run that ends while draining is reported as it is.
    if (state === 'stopped') return options.onError?.({ ...report, repeated: 0 });
    limiter.submit(errorKey(report), report, clock.now());
    armFlush();
  }

  function launch(slot: Slot, kind: ScheduledKind): void {
    slot.runs++;
    slot.running++;
    const started = clock.now();
    const failed = (err: unknown) =>
      finish(slot, kind, started, { outcome: 'failed', code: codeOf(err) ?? 'INTERNAL' });
    let pending: Promise<RunOutcome>;
    try {
      pending = options.run({ stepId: slot.step.stepId, workflowIndex: slot.step.workflowIndex }, kind);
    } catch (err) {
      return failed(err);
    }
    pending.then(
      (r) =>
        finish(
          slot,
          kind,
          started,
          r.errored ? { outcome: 'errored', errors: [...r.errors] } : { outcome: 'ok' },
        ),
      failed,
    );
  }

  function skip(slot: Slot, n: number): void {
    slot.skippedTicks += n;
    options.onSkip?.({
      stepId: slot.step.stepId,
      skipped: n,
      skippedTicks: slot.skippedTicks,
      running: slot.running,
    });
  }

  function arm(slot: Slot): void {
    const wait = Math.max(0, slot.dueAt - clock.now());
    slot.handle = clock.setTimeout(() => tick(slot), Math.min(wait, MAX_TIMEOUT_MS));
  }

  function tick(slot: Slot): void {
    slot.handle = undefined;
    if (state !== 'started') return;
    const period = slot.step.timer!.periodMs;
    const now = clock.now();
    // A wait longer than one setTimeout is chained; a timer that fires a little early is simply re-armed.
    if (slot.dueAt - now > 0) return arm(slot);
    if (slot.running >= max) skip(slot, 1);
    else launch(slot, 'timer');
    slot.dueAt += period;
    if (slot.dueAt <= now) {
      // The process stalled past whole periods: those ticks are skipped, not run in a burst.
      const missed = Math.floor((now - slot.dueAt) / period) + 1;
      slot.dueAt += missed * period;
      skip(slot, missed);
    }
    arm(slot);
  }

  return {
    steps: plan,
    start() {
      if (state !== 'idle') return;
      state = 'started';
      const now = clock.now();
      for (const slot of slots) {
        if (slot.step.runOnce) launch(slot, 'runOnce');
        const timer = slot.step.timer;
        if (!timer) continue;
        const staggerMs = Math.floor(clock.random() * timer.periodMs * (stagger / 100));
        slot.dueAt = now + timer.delayMs + staggerMs;
        arm(slot);
      }
    },
    stop() {
      if (state === 'stopped') return;
      state = 'stopped';
      for (const slot of slots) {
        if (slot.handle !== undefined) clock.clearTimeout(slot.handle);
        slot.handle = undefined;
      }
      if (flushHandle !== undefined) clock.clearTimeout(flushHandle);
      flushHandle = undefined;
      limiter.flush(clock.now(), true);
    },
    counters: () =>
      slots.map((s) => ({
        stepId: s.step.stepId,
        runs: s.runs,
        errors: s.errors,
        skippedTicks: s.skippedTicks,
        running: s.running,
      })),
  };
}
