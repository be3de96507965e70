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

  /** Records the start of a run; call the returned function once with whether it ended errored or failed. */
  start(deploymentId: string, stepId: string): (errored: boolean) => void {
    const key = `${deploymentId}\u0000${stepId}`;
    let c = this.#byStep.get(key);
    if (!c) this.#byStep.set(key, (c = { deploymentId, stepId, runs: 0, errors: 0, running: 0 }));
    const counter = c;
    counter.runs++;
    counter.running++;
    return (errored) => {
      counter.running--;
      if (errored) counter.errors++;
    };
  }

  counters(): HttpStepCounters[] {
    return [...this.#byStep.values()].map((c) => ({ ...c }));
  }
}
