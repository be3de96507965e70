import {
  createScheduler,
  type ErrorReport,
  type RunReport,
  type Scheduler,
  type SchedulerClock,
  type StepCounters,
  type WorkflowEngine,
} from '@org/workflow-engine';
import type { DeploymentRecord } from '@org/workflow-compiler';
import type { RunTracker } from './http/run-tracker.js';
import type { Output } from './output.js';
import { NO_METRICS, type RuntimeMetrics } from './observe/metrics.js';

/** One deployment's engine and record, for timed triggers. */
export interface TimedDeployment {
  readonly deploymentId: string;
  readonly engine: WorkflowEngine;
  /** `workflow.maxTimerConcurrency` and `workflow.timers.staggerPct` are read from it. */
  readonly record: DeploymentRecord;
}

/** Counters of one scheduled step (`runOnce`/`timer` runs; the app adds HTTP runs, app.ts `StepRunCounters`). */
export interface DeploymentStepCounters extends StepCounters {
  readonly deploymentId: string;
}

/** The running schedules of every deployment. */
export interface Scheduling {
  /** Starts every schedule (after the listeners are open). */
  start(): void;
  /** Clears every timer (runs in flight go on; the tracker drains them). */
  stop(): void;
  counters(): DeploymentStepCounters[];
}

const EMPTY_INPUT = () => ({ body: undefined, stream: undefined, headers: {}, properties: {} });

/** `workflow.maxTimerConcurrency` / `workflow.timers.staggerPct` of a validated record (schema-checked types). */
function settingsOf(record: DeploymentRecord): {
  max: number | null | undefined;
  stagger: number | undefined;
} {
  const wf = (record.workflow ?? {}) as {
    maxTimerConcurrency?: number | null;
    timers?: { staggerPct?: number };
  };
  return { max: wf.maxTimerConcurrency, stagger: wf.timers?.staggerPct };
}

function reportError(output: Output, deploymentId: string, e: ErrorReport): void {
  const fields = {
    deploymentId,
    stepId: e.stepId,
    trigger: e.kind,
    ...(e.outcome === 'errored' ? { errors: e.errors.join('; ') } : { code: e.code }),
  };
  // ADR 0056: the first of identical failures is logged in full, then one summary per window.
  if (e.repeated > 0) output.warn('step error repeated', { ...fields, repeated: e.repeated });
  else if (e.outcome === 'errored') output.warn('step errored', fields);
  else output.error('step run failed', fields);
}

function traceRun(output: Output, deploymentId: string, r: RunReport): void {
  if (r.noTrace) return;
  output.debug('step run', {
    deploymentId,
    stepId: r.stepId,
    trigger: r.kind,
    durationMs: Math.round(r.durationMs),
    outcome: r.outcome,
  });
}

/**
 * Creates one scheduler (`@org/workflow-engine`) per deployment; `start()` runs `runOnce` at once and timers
 * after their delay. Its timers keep the process alive until {@link Scheduling.stop}. Runs go through the
 * tracker so shutdown can drain them.
 * @throws RangeError for a `maxTimerConcurrency` or `staggerPct` out of range (the bootstrap schema prevents it).
 */
export function createTimedTriggers(
  deployments: readonly TimedDeployment[],
  tracker: RunTracker,
  output: Output,
  clock?: SchedulerClock,
  metrics: RuntimeMetrics = NO_METRICS,
): Scheduling {
  const schedulers: { deploymentId: string; scheduler: Scheduler }[] = [];
  for (const d of deployments) {
    const { max, stagger } = settingsOf(d.record);
    const id = d.deploymentId;
    const scheduler = createScheduler({
      steps: d.engine.steps,
      // The step itself, not the first with its id (ADR 0060).
      run: (step) => tracker.track(() => d.engine.runStep(step, EMPTY_INPUT())),
      clock,
      maxTimerConcurrency: max,
      staggerPct: stagger,
      onRun: (r) => {
        metrics.stepRun({
          deploymentId: id,
          stepId: r.stepId,
          trigger: r.kind,
          outcome: r.outcome === 'ok' ? 'ok' : 'error',
          seconds: r.durationMs / 1000,
        });
        traceRun(output, id, r);
      },
      onError: (e) => reportError(output, id, e),
      onSkip: (s) => output.debug('timer tick skipped', { deploymentId: id, ...s }),
    });
    schedulers.push({ deploymentId: id, scheduler });
  }
  return {
    start: () => schedulers.forEach((s) => s.scheduler.start()),
    stop: () => schedulers.forEach((s) => s.scheduler.stop()),
    counters: () =>
      schedulers.flatMap((s) => s.scheduler.counters().map((c) => ({ deploymentId: s.deploymentId, ...c }))),
  };
}
