import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateBootstrap, type DeploymentRecord } from '@org/workflow-compiler';
import { createWorkflowEngine, Redactor, type EngineHost, type WorkflowEngine } from '@org/workflow-engine';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeAll,
  createOutput,
  createRuntime,
  createStringDecryptor,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  hostPolicyOf,
  type Runtime,
} from '../src/index.js';
import { RunTracker } from '../src/http/run-tracker.js';
import { compileFileAccess } from '../src/files/access.js';
import { DEFAULT_FILE_LIMITS, type FileLimits } from '../src/files/limits.js';
import { FileWatcher } from '../src/files/watch/file-watcher.js';
import { fileOffsets } from '../src/files/watch/offsets.js';
import { fileWatchSpecs } from '../src/files/watch/triggers.js';

const dirs: string[] = [];
const engines: WorkflowEngine[] = [];
const runtimes: Runtime[] = [];
const watchers: FileWatcher[] = [];
afterEach(async () => {
  // Harness watchers hold their files open: close them (else their handles are closed on garbage collection).
  for (const w of watchers.splice(0)) await w.close();
  for (const r of runtimes.splice(0)) {
    await r.stop(500);
    await closeAll(r, 0);
  }
  for (const e of engines.splice(0)) e.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'watch-'));
  dirs.push(d);
  return d;
}

const record = (dir: string, extra: Record<string, unknown> = {}): DeploymentRecord =>
  validateBootstrap(
    JSON.stringify([
      {
        deploymentId: 'd1',
        remoteConfiguration: 'unused.oapp',
        allowFileAccess: [{ id: 'logs', directoryOrFile: dir, READ: true, ...extra }],
      },
    ]),
  )[0] as DeploymentRecord;

/** One step that logs its body and the file it came from. */
const workflowOf = (trigger: Record<string, unknown>) => ({
  workflows: [
    {
      name: 'w',
      steps: [
        {
          stepId: 'tail',
          trigger: { fileWatcher: { bootstrapFileId: 'logs', ...trigger } },
          resultsProcessor: {
            // Long messages are logged as #length#first#last (log lines are cut at 64 Ki characters).
            script: `const m = JSON.parse(context.getBody()).map((e) => e.message.length > 64 ? '#' + e.message.length + '#' + e.message[0] + '#' + e.message.at(-1) : e.message);
              console.log(context.getProperty('file.name') + ' ' + JSON.stringify(m));`,
          },
        },
      ],
    },
  ],
});

/** Undoes the step's `#length#first#last` shorthand (the test's long messages repeat one character). */
function expand(m: string): string {
  const long = /^#(\d+)#(.)#(.)$/s.exec(m);
  return long === null ? m : long[2]!.repeat(Number(long[1]) - 1) + long[3]!;
}

interface Harness {
  watcher: FileWatcher;
  /** Every run so far: [file, messages]. */
  runs: [string, string[]][];
  messages(): string[];
  clock: { now: number };
}

/** A real engine and one FileWatcher, driven by `scan()` (no timers, no fs.watch). */
async function harness(
  dir: string,
  trigger: Record<string, unknown>,
  opts: { dataDir?: string; limits?: Partial<FileLimits>; entry?: Record<string, unknown> } = {},
): Promise<Harness> {
  const runs: [string, string[]][] = [];
  const host: EngineHost = {
    callOutbound: () => Promise.reject(new Error('no calls')),
    getRestrictedData: () => Promise.reject(new Error('none')),
    registerSecret: () => undefined,
    log: (e) => {
      const at = e.message.indexOf(' ');
      const body = JSON.parse(e.message.slice(at + 1)) as string[];
      runs.push([e.message.slice(0, at), body.map(expand)]);
    },
    metric: () => undefined,
    now: Date.now,
  };
  const engine = await createWorkflowEngine(workflowOf(trigger), { host, data: {} });
  engines.push(engine);
  const rec = record(dir, opts.entry);
  // scan() attaches fs.watch unless watchEvents is off: a closed harness must not keep reading (restart test).
  const limits = { ...DEFAULT_FILE_LIMITS, watchEvents: false, ...opts.limits };
  const [spec] = fileWatchSpecs('d1', engine, compileFileAccess(rec, { baseDir: dir }), limits);
  const clock = { now: 1_000_000 };
  const lines: string[] = [];
  const redactor = new Redactor();
  const watcher = new FileWatcher(spec!, {
    engine,
    tracker: new RunTracker(),
    output: createOutput((l) => lines.push(l), redactor, undefined, 'debug'),
    limits,
    offsets: fileOffsets(opts.dataDir ?? temp(), 'd1', 0, 'tail'),
    now: () => clock.now,
  });
  watchers.push(watcher);
  return { watcher, runs, clock, messages: () => runs.flatMap(([, m]) => m) };
}

describe('fileWatcher', () => {
  it('delivers appended lines as a JSON array of {message}, with file.name, holding back a partial line', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'app.log'), 'a\nb\npart');
    const h = await harness(dir, { eventSplitter: '\\n', splitAtEnd: true });
    await h.watcher.scan();
    expect(h.runs).toEqual([['app.log', ['a\n', 'b\n']]]);
    appendFileSync(join(dir, 'app.log'), 'ial\n');
    await h.watcher.scan();
    expect(h.runs.at(-1)).toEqual(['app.log', ['partial\n']]);
  });

  it('without splitAtEnd the match ends each event ("line\\n"), as the reference (issue 28); "false" and false alike cut before it', async () => {
    // The reference's public file-reading test sets no splitAtEnd and expects each message to end with "\n".
    const dir = temp();
    writeFileSync(join(dir, 'app.log'), 'one\ntwo\nthr');
    const h = await harness(dir, { eventSplitter: '\\n' });
    await h.watcher.scan();
    expect(h.messages()).toEqual(['one\n', 'two\n']);
    for (const off of [false, 'false']) {
      const cut = await harness(dir, { eventSplitter: '\\n', splitAtEnd: off });
      await cut.watcher.scan();
      expect(cut.messages()).toEqual(['one', '\ntwo']);
    }
  });

  it('with splitAtEnd false a match starts the next event; the last one is delivered once the file is idle', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'app.log'), '2024-01 one\n  more\n2024-02 two\n');
    const h = await harness(
      dir,
      { eventSplitter: '\\n[0-9]{4}-', splitAtEnd: false },
      { limits: { watchIdleFlushMs: 500 } },
    );
    await h.watcher.scan();
    expect(h.messages()).toEqual(['2024-01 one\n  more']);
    await h.watcher.scan();
    expect(h.messages()).toHaveLength(1);
    h.clock.now += 500;
    await h.watcher.scan();
    expect(h.messages()).toEqual(['2024-01 one\n  more', '\n2024-02 two\n']);
  });

  it('follows only names both the entry and the trigger patterns allow', async () => {
    const dir = temp();
    for (const n of ['a.log', 'b.log', 'c.txt']) writeFileSync(join(dir, n), `${n}\n`);
    const h = await harness(
      dir,
      { eventSplitter: '\\n', splitAtEnd: true, patterns: ['[ab]\\.log', 'c\\.txt'] },
      { entry: { patterns: ['.*\\.log'] } },
    );
    await h.watcher.scan();
    expect(h.runs.map(([f]) => f).sort()).toEqual(['a.log', 'b.log']);
  });

  it('S136: a truncated file is read again from its start; nothing is duplicated', async () => {
    const dir = temp();
    const file = join(dir, 'app.log');
    writeFileSync(file, 'a\nb\n');
    const h = await harness(dir, { eventSplitter: '\\n', splitAtEnd: true });
    await h.watcher.scan();
    truncateSync(file, 0);
    appendFileSync(file, 'c\n');
    await h.watcher.scan();
    await h.watcher.scan();
    expect(h.messages()).toEqual(['a\n', 'b\n', 'c\n']);
  });

  it('S136: a rotated file (renamed, recreated) is read to its end, then the new one from its start', async () => {
    const dir = temp();
    const file = join(dir, 'app.log');
    writeFileSync(file, '1\n2\n');
    const h = await harness(dir, { eventSplitter: '\\n', splitAtEnd: true, patterns: ['app\\.log'] });
    await h.watcher.scan();
    appendFileSync(file, '3\n4');
    renameSync(file, join(dir, 'app.log.1'));
    writeFileSync(file, '5\n');
    await h.watcher.scan();
    await h.watcher.scan();
    expect(h.messages()).toEqual(['1\n', '2\n', '3\n', '4', '5\n']);
  });

  it('S136: a renamed file that still matches is followed by identity, not read twice', async () => {
    const dir = temp();
    const file = join(dir, 'app.log');
    writeFileSync(file, '1\n');
    const h = await harness(dir, { eventSplitter: '\\n', splitAtEnd: true, patterns: ['app\\.log.*'] });
    await h.watcher.scan();
    appendFileSync(file, '2\n');
    renameSync(file, join(dir, 'app.log.1'));
    writeFileSync(file, '3\n');
    await h.watcher.scan();
    expect(h.messages().sort()).toEqual(['1\n', '2\n', '3\n']);
  });

  it('S136: a 10 MiB line with no splitter match arrives in bounded pieces, nothing lost or repeated', async () => {
    const dir = temp();
    const big = 'x'.repeat(10 * 1024 * 1024);
    writeFileSync(join(dir, 'app.log'), `${big}\nend\n`);
    const limits = { eventChars: 1024 * 1024, batchChars: 1024 * 1024 };
    const h = await harness(dir, { eventSplitter: '\\n', splitAtEnd: true }, { limits });
    await h.watcher.scan();
    const got = h.messages();
    expect(got.join('')).toBe(`${big}\nend\n`);
    expect(Math.max(...got.map((m) => m.length))).toBeLessThanOrEqual(1024 * 1024);
    expect(got.at(-1)).toBe('end\n');
    for (const [, run] of h.runs) expect(run.join('').length).toBeLessThanOrEqual(1024 * 1024);
    // 10 MiB through the watcher and a step run per batch: seconds under a loaded CI machine, not a timing check.
  }, 60_000);

  it('batches hold at most batchMessages messages', async () => {
    const dir = temp();
    writeFileSync(join(dir, 'app.log'), 'l\n'.repeat(25));
    const h = await harness(
      dir,
      { eventSplitter: '\\n', splitAtEnd: true },
      { limits: { batchMessages: 10 } },
    );
    await h.watcher.scan();
    expect(h.runs.map(([, m]) => m.length)).toEqual([10, 10, 5]);
  });

  it('read offsets survive a restart (kept in the data directory)', async () => {
    const dir = temp();
    const dataDir = temp();
    writeFileSync(join(dir, 'app.log'), 'a\nb\n');
    const first = await harness(dir, { eventSplitter: '\\n', splitAtEnd: true }, { dataDir });
    await first.watcher.scan();
    await first.watcher.close();
    appendFileSync(join(dir, 'app.log'), 'c\n');
    const second = await harness(dir, { eventSplitter: '\\n', splitAtEnd: true }, { dataDir });
    await second.watcher.scan();
    expect(first.messages()).toEqual(['a\n', 'b\n']);
    expect(second.messages()).toEqual(['c\n']);
    await second.watcher.close();
  });

  it('S137: a catastrophic or unbounded eventSplitter or trigger pattern is refused at deploy time', async () => {
    const dir = temp();
    for (const trigger of [
      { eventSplitter: '(a+)+$' },
      { eventSplitter: '(\\n|\\r\\n)*x' },
      { eventSplitter: '.*\\n' },
      { eventSplitter: '(?=\\d)' },
      { eventSplitter: 'a?' },
      { eventSplitter: '\\n', patterns: ['(a|aa)*b'] },
      { eventSplitter: '\\n', patterns: ['(x+x+)+y'] },
    ]) {
      const engine = await createWorkflowEngine(workflowOf(trigger), {
        host: {} as EngineHost,
        data: {},
      });
      engines.push(engine);
      const files = compileFileAccess(record(dir), { baseDir: dir });
      expect(() => fileWatchSpecs('d1', engine, files, DEFAULT_FILE_LIMITS)).toThrowCode(
        'AgentError',
        'AGENT_TRIGGER_INVALID',
      );
    }
  });

  it('refuses an unknown bootstrapFileId and an entry without READ', async () => {
    const dir = temp();
    const engine = await createWorkflowEngine(workflowOf({ eventSplitter: '\\n' }), {
      host: {} as EngineHost,
      data: {},
    });
    engines.push(engine);
    const noRead = compileFileAccess(record(dir, { READ: false }), { baseDir: dir });
    expect(() => fileWatchSpecs('d1', engine, noRead, DEFAULT_FILE_LIMITS)).toThrowCode(
      'AgentError',
      'AGENT_TRIGGER_INVALID',
    );
    expect(() => fileWatchSpecs('d1', engine, new Map(), DEFAULT_FILE_LIMITS)).toThrowCode(
      'AgentError',
      'AGENT_TRIGGER_INVALID',
    );
  });

  it('runs in the runtime: an append reaches the step through fs.watch or the poll', async () => {
    const dir = temp();
    const dataDir = temp();
    writeFileSync(join(dir, 'app.log'), '');
    const lines: string[] = [];
    const redactor = new Redactor();
    const rec = record(dir);
    const workflow = workflowOf({ eventSplitter: '\\n', splitAtEnd: true });
    const runtime = await createRuntime({
      deployments: [{ record: rec, workflow, policy: hostPolicyOf(rec, []), source: 'test' }],
      redactor,
      output: createOutput((l) => lines.push(l), redactor, undefined, 'debug'),
      decryptor: createStringDecryptor([]),
      limits: DEFAULT_LIMITS,
      timeouts: DEFAULT_TIMEOUTS,
      dataDir,
      fileLimits: { watchPollMs: 50 },
    });
    runtimes.push(runtime);
    expect(lines.some((l) => l.includes('unsupported feature'))).toBe(false);
    runtime.startTriggers();
    appendFileSync(join(dir, 'app.log'), 'hello\n');
    const seen = () => lines.some((l) => l.includes('app.log [\\"hello\\\\n\\"]'));
    for (let i = 0; i < 200 && !seen(); i++) await new Promise((r) => setTimeout(r, 25));
    expect(seen()).toBe(true);
    // Each run is in the step counters (the agent's `step counters` lines), as runs of every other trigger are.
    const counted = () => runtime.stepCounters().find((c) => c.stepId === 'tail');
    for (let i = 0; i < 200 && counted()?.running !== 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(counted()).toMatchObject({ runs: 1, errors: 0, running: 0, httpRuns: 0 });
  });

  // A real runtime: its first run in the process starts a sandbox worker (about 1–2 s here, 2 cores, shared).
  it("issue 28: startFileWatchers starts one step's watchers only; its first check and checkFileWatchers are tracked", async () => {
    const dir = temp();
    writeFileSync(join(dir, 'app.log'), 'first\n');
    const lines: string[] = [];
    const redactor = new Redactor();
    const rec = record(dir);
    const workflow = workflowOf({ eventSplitter: '\\n', splitAtEnd: true });
    workflow.workflows[0]!.steps.push({
      stepId: 'timed',
      trigger: { timer: { period: 10 } } as never,
      resultsProcessor: { script: "console.log('timer ran');" },
    });
    // No change events, a poll far beyond the test: only the first check and checkFileWatchers read the file.
    const runtime = await createRuntime({
      deployments: [{ record: rec, workflow, policy: hostPolicyOf(rec, []), source: 'test' }],
      redactor,
      output: createOutput((l) => lines.push(l), redactor, undefined, 'debug'),
      decryptor: createStringDecryptor([]),
      limits: DEFAULT_LIMITS,
      timeouts: DEFAULT_TIMEOUTS,
      dataDir: temp(),
      fileLimits: { watchEvents: false, watchPollMs: 600_000 },
    });
    runtimes.push(runtime);
    expect(runtime.startFileWatchers('d1', 'timed')).toBe(0);
    expect(runtime.startFileWatchers('d1', 'tail')).toBe(1);
    expect(runtime.startFileWatchers('d1', 'tail')).toBe(1); // started once: no second poll, no second read
    expect(await runtime.tracker.idle(5_000)).toBe(true);
    const logged = (text: string) => lines.filter((l) => l.includes(text)).length;
    expect(logged('app.log [\\"first\\\\n\\"]')).toBe(1);
    appendFileSync(join(dir, 'app.log'), 'second\n');
    await runtime.checkFileWatchers();
    expect(logged('app.log [\\"second\\\\n\\"]')).toBe(1);
    expect(logged('timer ran')).toBe(0); // no other trigger was started
  }, 15_000);
});
