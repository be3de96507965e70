import type { StepResult } from '@org/workflow-engine';
import { isCodedError } from './errors.js';
import type { HttpRunCounters } from './http/http-runs.js';
import type { RunTracker } from './http/run-tracker.js';
import type { Fields, Output } from './output.js';

/** Where a {@link reportedRun} is tracked, counted and logged. */
export interface RunReporting {
  readonly tracker: RunTracker;
  readonly output: Output;
  /** Counts the run (`step counters`); absent: not counted. */
  readonly runs?: HttpRunCounters | undefined;
}

/**
 * Runs one step as a trigger does: tracked (so a stop drains it), counted, a `step run failed` (the engine
 * rejected) or `step errored` line, and the debug `step run` line unless `noTrace`. `fields` name deployment,
 * step and trigger; `trace` adds fields to the debug line only. Resolves with the result, undefined when the run
 * failed.
 */
export async function reportedRun(
  r: RunReporting,
  fields: Fields & { readonly deploymentId: string; readonly stepId: string },
  run: () => Promise<StepResult>,
  options: { readonly noTrace?: boolean; readonly trace?: Fields } = {},
): Promise<StepResult | undefined> {
  const started = performance.now();
  const done = r.runs?.start(fields.deploymentId, fields.stepId);
  const result = await r.tracker.track(run).catch((err: unknown) => {
    r.output.error('step run failed', { ...fields, code: isCodedError(err) ? err.code : 'INTERNAL' });
    return undefined;
  });
  done?.(result === undefined || result.errored);
  if (result?.errored === true)
    r.output.warn('step errored', { ...fields, errors: result.errors.join('; ') });
  if (options.noTrace !== true) {
    const outcome = result === undefined ? 'failed' : result.errored ? 'errored' : 'ok';
    const durationMs = Math.round(performance.now() - started);
    r.output.debug('step run', { ...fields, ...options.trace, durationMs, outcome });
  }
  return result;
}
