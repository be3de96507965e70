import { NO_METRICS, type RuntimeMetrics, type TriggerKind } from '../observe/metrics.js';

/** Counters of the runs HTTP triggers started, per deployment and step (issue: "each step run can be seen"). */
export interface HttpStepCounters {
  readonly deploymentId: string;
  readonly stepId: string;
  /** Runs started. */
  readonly runs: number;
  /** Runs that ended errored (the answer was an error) or failed (the engine rejected). */
  readonly errors: number;
  /** Runs in flight now. */
  readonly running: number;
}

/**
 * Counts step runs per deployment and step. The runtime keeps one for HTTP triggers (`httpRuns`) and one for the
 * other event triggers (`fileWatcher`, `tcp`, `deploymentAccess`); both are added to the scheduler's counters.
 */
export class HttpRunCounters {
  readonly #byStep = new Map<
    string,
    { deploymentId: string; stepId: string; runs: number; errors: number; running: number }
  >();

  /** `metrics` gets every run as it ends, under `trigger` (default: counted here only). */
  constructor(
    private readonly metrics: RuntimeMetrics = NO_METRICS,
    private readonly trigger: TriggerKind = 'http',
  ) {}

  /** Records the start of a run; call the returned function once with whether it ended errored or failed. */
  start(deploymentId: string, stepId: string): (errored: boolean) => void {
    const key = `${deploymentId}\u0000${stepId}`;
    let c = this.#byStep.get(key);
    if (!c) this.#byStep.set(key, (c = { deploymentId, stepId, runs: 0, errors: 0, running: 0 }));
    const counter = c;
    counter.runs++;
    counter.running++;
    const started = performance.now();
    return (errored) => {
      counter.running--;
      if (errored) counter.errors++;
      this.metrics.stepRun({
        deploymentId,
        stepId,
        trigger: this.trigger,
        outcome: errored ? 'error' : 'ok',
        seconds: (performance.now() - started) / 1000,
      });
    };
  }

  counters(): HttpStepCounters[] {
    return [...this.#byStep.values()].map((c) => ({ ...c }));
  }
}
