import type { StepInfo, WorkflowEngine } from '@org/workflow-engine';
import { AgentError } from '../../errors.js';
import type { HttpRunCounters } from '../../http/http-runs.js';
import type { RunTracker } from '../../http/run-tracker.js';
import type { Output } from '../../output.js';
import type { FileAccess } from '../access.js';
import type { FileLimits } from '../limits.js';
import { namePatternProblem, splitterProblem } from '../regex-budget.js';
import { FileWatcher, type WatchSpec } from './file-watcher.js';
import { fileOffsets, memoryOffsets } from './offsets.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const truthy = (v: unknown): boolean => v === true || v === 'true';
/**
 * `splitAtEnd` unset is true: the match ends the event ("line\n"), as the reference's public file-reading test
 * expects with no `splitAtEnd` (ADR 0134). Only an explicit `false` cuts at the start of the match.
 */
const splitAtEndOf = (v: unknown): boolean => v === undefined || v === null || truthy(v);

function invalid(deploymentId: string, step: StepInfo, why: string): AgentError {
  return new AgentError(
    'AGENT_TRIGGER_INVALID',
    `deployment "${deploymentId}" step ${JSON.stringify(step.stepId.slice(0, 200))}: fileWatcher ${why}`,
  );
}

function specOf(
  deploymentId: string,
  step: StepInfo,
  t: Obj,
  files: ReadonlyMap<string, FileAccess>,
  limits: FileLimits,
): WatchSpec {
  const id = String(t['bootstrapFileId']);
  const access = files.get(id);
  if (access === undefined) throw invalid(deploymentId, step, `names no allowFileAccess entry "${id}"`);
  if (!access.read) throw invalid(deploymentId, step, `needs READ on allowFileAccess "${id}"`);
  const splitter = String(t['eventSplitter']);
  const problem = splitterProblem(splitter);
  if (problem !== undefined) throw invalid(deploymentId, step, `eventSplitter ${problem}`);
  const patterns = (Array.isArray(t['patterns']) ? t['patterns'] : []).map((p, i) => {
    const why = namePatternProblem(String(p));
    if (why !== undefined) throw invalid(deploymentId, step, `patterns[${i}] ${why}`);
    return new RegExp(`^(?:${String(p)})$`);
  });
  return {
    deploymentId,
    step,
    access,
    patterns,
    split: {
      eventSplitter: splitter,
      splitAtEnd: splitAtEndOf(t['splitAtEnd']),
      eventChars: limits.eventChars,
    },
    noTrace: truthy(t['noTrace']),
  };
}

/**
 * The `fileWatcher` triggers of one deployment, checked at start-up: the entry exists and grants READ, and
 * `eventSplitter` and `patterns` pass the regex guard (S137).
 * @throws AgentError `AGENT_TRIGGER_INVALID` naming deployment, step and field.
 */
export function fileWatchSpecs(
  deploymentId: string,
  engine: WorkflowEngine,
  files: ReadonlyMap<string, FileAccess>,
  limits: FileLimits,
): WatchSpec[] {
  const out: WatchSpec[] = [];
  for (const step of engine.steps) {
    const t = isObject(step.trigger) ? step.trigger['fileWatcher'] : undefined;
    if (isObject(t)) out.push(specOf(deploymentId, step, t, files, limits));
  }
  return out;
}

/** What {@link createFileWatchers} needs besides the specs. */
export interface FileWatchersDeps {
  readonly engines: ReadonlyMap<string, WorkflowEngine>;
  readonly tracker: RunTracker;
  readonly output: Output;
  readonly limits: FileLimits;
  /** Offsets go to `<dataDir>/file-watch/`; without it they are kept in memory only. */
  readonly dataDir: string | undefined;
  /** Counts each run (the runtime's `step counters`). */
  readonly runs?: HttpRunCounters | undefined;
}

/** The running file watchers of a runtime. */
export interface FileWatchers {
  start(): void;
  /** Starts only the watchers of one step (the test runner, issue 28); returns how many there are. */
  startStep(deploymentId: string, stepId: string): number;
  /** Makes every started watcher check its files now; resolves when those scans (and their runs) are done. */
  scanStarted(): Promise<void>;
  stop(): void;
  close(): Promise<void>;
  /** The watchers, for tests and benches (`scan()` checks at once). */
  readonly all: readonly FileWatcher[];
}

/** One {@link FileWatcher} per spec; nothing is read before `start()`. */
export function createFileWatchers(specs: readonly WatchSpec[], deps: FileWatchersDeps): FileWatchers {
  const all = specs.map((spec) => {
    const engine = deps.engines.get(spec.deploymentId)!;
    const offsets =
      deps.dataDir === undefined
        ? memoryOffsets()
        : fileOffsets(deps.dataDir, spec.deploymentId, spec.step.workflowIndex, spec.step.stepId);
    return new FileWatcher(spec, { ...deps, engine, offsets });
  });
  return {
    all,
    start: () => all.forEach((w) => w.start()),
    startStep: (deploymentId, stepId) => {
      const mine = all.filter((w) => w.deploymentId === deploymentId && w.stepId === stepId);
      mine.forEach((w) => w.start());
      return mine.length;
    },
    scanStarted: async () => {
      await Promise.all(all.filter((w) => w.started).map((w) => w.scan()));
    },
    stop: () => all.forEach((w) => w.stop()),
    close: async () => {
      for (const w of all) await w.close();
    },
  };
}
