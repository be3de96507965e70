import { describe, expect, it } from 'vitest';
import {
  createScheduler,
  MAX_TIMEOUT_MS,
  planSchedule,
  type ErrorReport,
  type RunOutcome,
  type RunReport,
  type SchedulerOptions,
  type SkipReport,
  type StepInfo,
} from '../src/index.js';
import { fakeClock, type FakeClock } from './fake-clock.js';

const OK: RunOutcome = { errored: false, errors: [] };

interface Harness {
  clock: FakeClock;
  /** Times (fake clock) each step's runs started. */
  starts: Record<string, number[]>;
  /** Highest number of runs of one step in flight at once. */
  maxInFlight: Record<string, number>;
  runs: RunReport[];
  errors: ErrorReport[];
  skips: SkipReport[];
  scheduler: ReturnType<typeof createScheduler>;
}

/**
 * A scheduler over a fake clock whose runs take `durations[stepId]` fake ms (default 0) and end with what
 * `outcome(stepId)` returns or throws.
 */
/** Steps of one workflow (index 0), as `engine.steps` lists them. */
type TestStep = Omit<StepInfo, 'workflowIndex' | 'workflow'>;

function harness(
  testSteps: TestStep[],
  o: Partial<SchedulerOptions> & {
    durations?: Record<string, number>;
    outcome?: (stepId: string) => RunOutcome;
  } = {},
): Harness {
  const clock = fakeClock();
  const h: Omit<Harness, 'scheduler'> = {
    clock,
    starts: {},
    maxInFlight: {},
    runs: [],
    errors: [],
    skips: [],
  };
  const inFlight: Record<string, number> = {};
  const steps: StepInfo[] = testSteps.map((s) => ({ ...s, workflowIndex: 0, workflow: 'w' }));
  const scheduler = createScheduler({
    steps,
    clock,
    run: ({ stepId }) => {
      (h.starts[stepId] ??= []).push(clock.now());
      inFlight[stepId] = (inFlight[stepId] ?? 0) + 1;
      h.maxInFlight[stepId] = Math.max(h.maxInFlight[stepId] ?? 0, inFlight[stepId]);
      return new Promise<RunOutcome>((resolve, reject) => {
        clock.setTimeout(() => {
          inFlight[stepId]!--;
          try {
            resolve(o.outcome ? o.outcome(stepId) : OK);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        }, o.durations?.[stepId] ?? 0);
      });
    },
    onRun: (r) => h.runs.push(r),
    onError: (r) => h.errors.push(r),
    onSkip: (r) => h.skips.push(r),
    ...o,
  });
  return { ...h, scheduler };
}

const timer = (stepId: string, period: number, delay?: number, extra: object = {}): StepInfo => ({
  stepId,
  workflowIndex: 0,
  workflow: 'w',
  trigger: { timer: { period, ...(delay === undefined ? {} : { delay }), ...extra } },
});

const counters = (h: Harness, stepId: string) => h.scheduler.counters().find((c) => c.stepId === stepId);

describe('createScheduler: timers', () => {
  it('runs a timer first after its delay, then every period', async () => {
    const h = harness([timer('t', 100, 30)]);
    h.scheduler.start();
    await h.clock.advance(29);
    expect(h.starts['t']).toBeUndefined();
    await h.clock.advance(1);
    expect(h.starts['t']).toEqual([1030]);
    await h.clock.advance(300);
    expect(h.starts['t']).toEqual([1030, 1130, 1230, 1330]);
    expect(h.runs.map((r) => [r.stepId, r.kind, r.outcome])).toContainEqual(['t', 'timer', 'ok']);
  });

  it('waits one period before the first run when delay is absent', async () => {
    const h = harness([timer('t', 100)]);
    h.scheduler.start();
    await h.clock.advance(99);
    expect(h.starts['t']).toBeUndefined();
    await h.clock.advance(1);
    expect(h.starts['t']).toEqual([1100]);
  });

  it('runs a delay of 0 at once and keeps a fixed rate from the first due time', async () => {
    const h = harness([timer('t', 50, 0)], { durations: { t: 20 } });
    h.scheduler.start();
    await h.clock.advance(160);
    expect(h.starts['t']).toEqual([1000, 1050, 1100, 1150]);
  });

  it('chains waits longer than one setTimeout can take', async () => {
    const period = MAX_TIMEOUT_MS + 1000;
    const h = harness([timer('t', period, period)]);
    h.scheduler.start();
    expect(Math.max(...h.clock.waits)).toBeLessThanOrEqual(MAX_TIMEOUT_MS);
    await h.clock.advance(period - 1);
    expect(h.starts['t']).toBeUndefined();
    await h.clock.advance(1);
    expect(h.starts['t']).toEqual([1000 + period]);
  });

  it('does not start before start() and stays stopped after stop()', async () => {
    const h = harness([timer('t', 10, 0), { stepId: 'o', trigger: { runOnce: true } }]);
    await h.clock.advance(100);
    expect(h.starts).toEqual({});
    h.scheduler.start();
    h.scheduler.start();
    await h.clock.advance(25);
    expect(h.starts['t']).toHaveLength(3);
    expect(h.starts['o']).toHaveLength(1);
    h.scheduler.stop();
    expect(h.clock.pending).toBe(0);
    h.scheduler.start();
    await h.clock.advance(100);
    expect(h.starts['t']).toHaveLength(3);
    expect(h.starts['o']).toHaveLength(1);
  });
});

describe('createScheduler: runOnce', () => {
  it('runs runOnce and runOnceNoTrace once at start; noTrace marks the report', async () => {
    const h = harness([
      { stepId: 'a', trigger: { runOnce: true } },
      { stepId: 'b', trigger: { runOnceNoTrace: 'true' } },
      { stepId: 'c', trigger: { runOnce: 'false' } },
      { stepId: 'd', trigger: undefined },
    ]);
    h.scheduler.start();
    await h.clock.advance(1000);
    expect(h.starts).toEqual({ a: [1000], b: [1000] });
    expect(h.runs.map((r) => [r.stepId, r.kind, r.noTrace])).toEqual([
      ['a', 'runOnce', false],
      ['b', 'runOnce', true],
    ]);
  });

  it('marks timer runs of a timer with noTrace', async () => {
    const h = harness([timer('t', 10, 0, { noTrace: true })]);
    h.scheduler.start();
    await h.clock.advance(0);
    expect(h.runs[0]).toMatchObject({ stepId: 't', kind: 'timer', noTrace: true });
  });
});

describe('createScheduler: staggerPct', () => {
  it('adds a one-time random start delay below staggerPct % of the period', async () => {
    for (const [random, first] of [
      [0, 1100],
      [0.5, 1350],
      [0.999999, 1599],
    ] as const) {
      const h = harness([timer('t', 1000, 100)], { staggerPct: 50 });
      h.clock.setRandom(random);
      h.scheduler.start();
      await h.clock.advance(3000);
      expect(h.starts['t']?.slice(0, 2)).toEqual([first, first + 1000]);
    }
  });

  it('adds nothing with staggerPct 0 (the default)', async () => {
    const h = harness([timer('t', 1000, 100)]);
    h.clock.setRandom(0.99);
    h.scheduler.start();
    await h.clock.advance(100);
    expect(h.starts['t']).toEqual([1100]);
  });

  it('refuses out-of-range options with RangeError', () => {
    const steps = [timer('t', 10)];
    const run = () => Promise.resolve(OK);
    expect(() => createScheduler({ steps, run, staggerPct: 101 })).toThrow(RangeError);
    expect(() => createScheduler({ steps, run, staggerPct: -1 })).toThrow(RangeError);
    expect(() => createScheduler({ steps, run, maxTimerConcurrency: 0 })).toThrow(RangeError);
    expect(() => createScheduler({ steps, run, maxTimerConcurrency: 1.5 })).toThrow(RangeError);
    expect(() => createScheduler({ steps, run, errorRepeatIntervalMs: 0 })).toThrow(RangeError);
  });
});

describe('createScheduler: overlap and skipped ticks', () => {
  it('S119: a timer step slower than its period never overlaps itself; skipped ticks are counted; other steps keep running', async () => {
    const h = harness([timer('slow', 100, 100), timer('fast', 100, 100)], { durations: { slow: 250 } });
    h.scheduler.start();
    await h.clock.advance(700);
    // Ticks at 100 (run, ends 350), 200 and 300 skipped, 400 run (ends 650), 500 and 600 skipped, 700 run.
    expect(h.starts['slow']).toEqual([1100, 1400, 1700]);
    expect(h.maxInFlight['slow']).toBe(1);
    expect(counters(h, 'slow')).toMatchObject({ runs: 3, skippedTicks: 4, errors: 0, running: 1 });
    expect(h.skips.filter((s) => s.stepId === 'slow').map((s) => s.skippedTicks)).toEqual([1, 2, 3, 4]);
    expect(h.starts['fast']).toHaveLength(7);
    expect(counters(h, 'fast')).toMatchObject({ runs: 7, skippedTicks: 0 });
  });

  it('lets runs of one step overlap up to maxTimerConcurrency', async () => {
    const h = harness([timer('slow', 100, 100)], { durations: { slow: 250 }, maxTimerConcurrency: 2 });
    h.scheduler.start();
    await h.clock.advance(600);
    // 100 run, 200 run, 300 skipped (two in flight), 400 run (100's ended at 350), 500 run (200's ended at 450), 600 skipped.
    expect(h.starts['slow']).toEqual([1100, 1200, 1400, 1500]);
    expect(h.maxInFlight['slow']).toBe(2);
    expect(counters(h, 'slow')).toMatchObject({ runs: 4, skippedTicks: 2 });
  });

  it('treats maxTimerConcurrency null as 1', async () => {
    const h = harness([timer('slow', 100, 100)], { durations: { slow: 150 }, maxTimerConcurrency: null });
    h.scheduler.start();
    await h.clock.advance(400);
    expect(h.maxInFlight['slow']).toBe(1);
  });

  it('counts a runOnce run in flight against the timer of the same step', async () => {
    const h = harness([{ stepId: 's', trigger: { runOnce: true, timer: { period: 100, delay: 0 } } }], {
      durations: { s: 150 },
    });
    h.scheduler.start();
    await h.clock.advance(200);
    expect(h.starts['s']).toEqual([1000, 1200]);
    expect(counters(h, 's')).toMatchObject({ runs: 2, skippedTicks: 2 });
  });

  it('skips the ticks missed while the process stalled instead of running them in a burst', async () => {
    const h = harness([timer('t', 100, 100)]);
    h.scheduler.start();
    await h.clock.advance(100);
    h.clock.jump(450);
    await h.clock.advance(0);
    // The tick due at 200 runs late (at 550); those due at 300, 400 and 500 are skipped; the next is at 600.
    expect(h.starts['t']).toEqual([1100, 1550]);
    expect(counters(h, 't')?.skippedTicks).toBe(3);
    await h.clock.advance(50);
    expect(h.starts['t']).toEqual([1100, 1550, 1600]);
  });
});

describe('createScheduler: failures', () => {
  it('S120: a timer step that fails every run keeps being scheduled; identical errors are reported once, then once per window', async () => {
    const h = harness([timer('bad', 100, 100), timer('good', 100, 100)], {
      errorRepeatIntervalMs: 1000,
      outcome: (id) => (id === 'bad' ? { errored: true, errors: ['resultsProcessor: boom'] } : OK),
    });
    h.scheduler.start();
    await h.clock.advance(1000);
    expect(counters(h, 'bad')).toMatchObject({ runs: 10, errors: 10 });
    expect(counters(h, 'good')).toMatchObject({ runs: 10, errors: 0 });
    expect(h.errors.map((e) => e.repeated)).toEqual([0]);
    await h.clock.advance(100);
    // The window of the first report (opened at 1100) ended at 2100: one summary of the 9 swallowed since.
    expect(h.errors.map((e) => [e.stepId, e.outcome, e.repeated])).toEqual([
      ['bad', 'errored', 0],
      ['bad', 'errored', 9],
    ]);
    expect(h.errors[1]?.errors).toEqual(['resultsProcessor: boom']);
    await h.clock.advance(2000);
    expect(h.errors.map((e) => e.repeated)).toEqual([0, 9, 10, 10]);
    expect(counters(h, 'bad')?.runs).toBe(31);
    // stop() reports what the open window swallowed so far (the run at 4100, after that window's summary).
    h.scheduler.stop();
    expect(h.errors.map((e) => e.repeated)).toEqual([0, 9, 10, 10, 1]);
  });

  it('reports rejected runs with their code, separately from other errors, and flushes summaries at stop', async () => {
    let n = 0;
    const h = harness([timer('t', 100, 100)], {
      outcome: () => {
        n++;
        if (n % 2 === 0) throw Object.assign(new Error('x'), { code: 'ENGINE_TIMEOUT' });
        return { errored: true, errors: ['e'] };
      },
    });
    h.scheduler.start();
    await h.clock.advance(600);
    expect(h.errors.map((e) => [e.outcome, e.code, e.repeated])).toEqual([
      ['errored', undefined, 0],
      ['failed', 'ENGINE_TIMEOUT', 0],
    ]);
    h.scheduler.stop();
    expect(h.errors.map((e) => [e.outcome, e.repeated])).toEqual([
      ['errored', 0],
      ['failed', 0],
      ['errored', 2],
      ['failed', 2],
    ]);
  });

  it('reports a run function that throws at once as failed with code INTERNAL', async () => {
    const clock = fakeClock();
    const errors: ErrorReport[] = [];
    const s = createScheduler({
      steps: [timer('t', 10, 0)],
      clock,
      run: () => {
        throw new Error('sync');
      },
      onError: (e) => errors.push(e),
    });
    s.start();
    await clock.advance(30);
    expect(errors[0]).toMatchObject({ outcome: 'failed', code: 'INTERNAL', repeated: 0 });
    expect(s.counters()[0]).toMatchObject({ runs: 4, errors: 4, running: 0 });
    s.stop();
  });

  it('reports a run that ends after stop() as it is', async () => {
    const h = harness([timer('t', 100, 0)], {
      durations: { t: 50 },
      outcome: () => ({ errored: true, errors: ['late'] }),
    });
    h.scheduler.start();
    await h.clock.advance(60);
    h.clock.jump(40);
    h.clock.setTimeout(() => undefined, 0);
    await h.clock.advance(0);
    expect(h.starts['t']).toEqual([1000, 1100]);
    h.scheduler.stop();
    await h.clock.advance(100);
    expect(h.errors.map((e) => [e.errors[0], e.repeated])).toEqual([
      ['late', 0],
      ['late', 0],
    ]);
  });
});

describe('planSchedule', () => {
  it('reads runOnce and timer triggers and names unusable timers', () => {
    const plan = planSchedule(
      [
        timer('a', 100, 5),
        timer('b', 0),
        timer('c', 100, -1),
        { stepId: 'd', trigger: { timer: 'soon' } },
        { stepId: 'e', trigger: { http: { server: 'x', path: '/' } } },
      ].map((s) => ({ ...s, workflowIndex: 1, workflow: 'w' })),
    );
    expect(plan.steps).toEqual([
      {
        stepId: 'a',
        workflowIndex: 1,
        runOnce: false,
        timer: { periodMs: 100, delayMs: 5 },
        noTrace: { runOnce: false, timer: false },
      },
    ]);
    expect(plan.problems.map((p) => p.stepId)).toEqual(['b', 'c', 'd']);
  });
});
