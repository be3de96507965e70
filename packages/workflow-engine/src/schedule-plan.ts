import type { StepInfo } from './types.js';
import { isTrue } from './workflow-model.js';

/** What started a scheduled run. */
export type ScheduledKind = 'runOnce' | 'timer';

/** One step's `runOnce`/`timer` triggers, read from its compiled trigger (docs/interfaces.md §4.4). */
export interface ScheduledStep {
  readonly stepId: string;
  /** The step's workflow (duplicate step ids in other workflows are other steps, ADR 0060). */
  readonly workflowIndex: number;
  /** `runOnce` or `runOnceNoTrace` is true. */
  readonly runOnce: boolean;
  readonly timer: { readonly periodMs: number; readonly delayMs: number } | undefined;
  /** `runOnceNoTrace`, or `timer.noTrace` true: no per-run trace line (errors are still reported). */
  readonly noTrace: { readonly runOnce: boolean; readonly timer: boolean };
}

/** A trigger the scheduler cannot run, for a start-up warning. */
export interface SchedulePlanProblem {
  readonly stepId: string;
  readonly detail: string;
}

/** Timer delays and periods above this are refused (≈ 10 years; far beyond any real schedule). */
export const MAX_TIMER_MS = 10 * 365 * 24 * 60 * 60 * 1000;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isMs(v: unknown, min: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= MAX_TIMER_MS;
}

function timerOf(stepId: string, t: unknown, problems: SchedulePlanProblem[]): ScheduledStep['timer'] {
  if (t === undefined) return undefined;
  if (!isObject(t) || !isMs(t['period'], 1)) {
    problems.push({ stepId, detail: `timer.period must be an integer from 1 to ${MAX_TIMER_MS} ms` });
    return undefined;
  }
  const delay = t['delay'];
  if (delay !== undefined && !isMs(delay, 0)) {
    problems.push({ stepId, detail: `timer.delay must be an integer from 0 to ${MAX_TIMER_MS} ms` });
    return undefined;
  }
  // ADR 0056: without `delay` the first run comes one period after start (as before this scheduler).
  return { periodMs: t['period'], delayMs: delay ?? t['period'] };
}

/**
 * Reads the `runOnce`, `runOnceNoTrace` and `timer` triggers of the steps. Steps with neither are left out; a
 * timer with an unusable period or delay is left out and named in `problems`.
 */
export function planSchedule(steps: readonly StepInfo[]): {
  steps: ScheduledStep[];
  problems: SchedulePlanProblem[];
} {
  const out: ScheduledStep[] = [];
  const problems: SchedulePlanProblem[] = [];
  for (const { stepId, workflowIndex, trigger } of steps) {
    if (!isObject(trigger)) continue;
    const once = isTrue(trigger['runOnce'], false);
    const onceNoTrace = isTrue(trigger['runOnceNoTrace'], false);
    const timer = timerOf(stepId, trigger['timer'], problems);
    if (!once && !onceNoTrace && !timer) continue;
    const timerNoTrace = isObject(trigger['timer']) && isTrue(trigger['timer']['noTrace'], false);
    out.push({
      stepId,
      workflowIndex,
      runOnce: once || onceNoTrace,
      timer,
      noTrace: { runOnce: onceNoTrace && !once, timer: timerNoTrace },
    });
  }
  return { steps: out, problems };
}
