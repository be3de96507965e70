import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNSUPPORTED_CONTEXT_CALLS } from '@org/workflow-engine';
import { createOutput } from '@org/workflow-runtime';
import { Redactor } from '@org/workflow-engine';
import { DELIBERATE_DIFFERENCES } from '@org/workflow-runtime/internal';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, until, type RunningAgent } from './agent-helpers.js';

const keys = makeKeys();
const dir = tempDir();

type Line = Record<string, unknown>;
const parse = (a: RunningAgent): Line[] => a.lines.map((l) => JSON.parse(l) as Line);

/** A run that overlaps a run of the same step marks itself errored (step properties outlive the run). */
const OVERLAP_PROBE =
  "const p = context.getStepProperties(); if (p.get('busy') === '1') context.addSystemError('overlap'); p.set('busy', '1'); context.sleep(120); p.set('busy', '0'); context.diagnosticLog('slow done');";

const scheduled = {
  workflows: [
    {
      name: 'scheduled',
      steps: [
        {
          stepId: 'slow',
          trigger: { timer: { period: 20, delay: 0 } },
          resultsProcessor: { script: OVERLAP_PROBE },
        },
        {
          stepId: 'broken',
          trigger: { timer: { period: 20, delay: 0 } },
          resultsProcessor: { script: "throw new Error('always broken')" },
        },
        {
          stepId: 'quiet',
          trigger: { timer: { period: 20, delay: 0, noTrace: true } },
          resultsProcessor: { script: "context.setBody('q')" },
        },
        {
          stepId: 'ping',
          trigger: { http: { server: 'api', method: 'GET', path: '/ping' } },
          resultsProcessor: { script: "context.setBody('pong')" },
        },
      ],
    },
  ],
};

describe('timers in the agent', () => {
  let a: RunningAgent;
  const counters = (stepId: string) => a.agent.stepCounters().find((c) => c.stepId === stepId)!;

  beforeAll(async () => {
    a = await startAgent(
      keys,
      [
        makeRecord(keys, writePackage(dir, keys, { workflow: scheduled }), {
          workflow: { maxTimerConcurrency: 1 },
        }),
      ],
      { logLevel: 'debug' },
    );
    // Under load the first slow run may still be going when the ticks are skipped: wait for one to end too.
    await until(
      () =>
        counters('slow').skippedTicks >= 3 &&
        counters('broken').runs >= 5 &&
        parse(a).some((l) => l['msg'] === 'step run' && l['stepId'] === 'slow'),
      20_000,
    );
  });
  afterAll(() => a.close());

  it('S119: a timer step slower than its period never overlaps itself, counts skipped ticks, and HTTP is still served', async () => {
    expect(await (await fetch(`${a.url('api')}/ping`)).text()).toBe('pong');
    const slow = counters('slow');
    expect(slow).toMatchObject({ deploymentId: 'dep-1', errors: 0 });
    expect(slow.running).toBeLessThanOrEqual(1);
    expect(parse(a).filter((l) => l['msg'] === 'step errored' && l['stepId'] === 'slow')).toEqual([]);
    expect(parse(a).some((l) => l['msg'] === 'timer tick skipped' && l['stepId'] === 'slow')).toBe(true);
  });

  it('S120: a timer step that throws on every run keeps running; its identical error line is logged once', async () => {
    const before = counters('broken').runs;
    await until(() => counters('broken').runs >= before + 3, 20_000);
    const broken = counters('broken');
    expect(broken.errors).toBe(broken.runs - broken.running);
    const lines = parse(a).filter((l) => l['stepId'] === 'broken' && l['level'] === 'warn');
    // The default window is 60 s: within it, only the first occurrence is written.
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'step errored', trigger: 'timer' });
    expect(String(lines[0]!['errors'])).toContain('always broken');
    expect(await (await fetch(`${a.url('api')}/ping`)).text()).toBe('pong');
  });

  it('writes one debug line per run with step, trigger, duration and outcome, except for noTrace timers', () => {
    const runs = parse(a).filter((l) => l['msg'] === 'step run');
    const slow = runs.find((l) => l['stepId'] === 'slow');
    expect(slow).toMatchObject({ level: 'debug', deploymentId: 'dep-1', trigger: 'timer', outcome: 'ok' });
    expect(typeof slow!['durationMs']).toBe('number');
    expect(runs.find((l) => l['stepId'] === 'broken')).toMatchObject({ outcome: 'errored' });
    expect(counters('quiet').runs).toBeGreaterThan(0);
    expect(runs.some((l) => l['stepId'] === 'quiet')).toBe(false);
  });

  it('logs the step counters at stop', async () => {
    await a.close();
    const lines = parse(a).filter((l) => l['msg'] === 'step counters');
    expect(lines.map((l) => l['stepId']).sort()).toEqual(['broken', 'ping', 'quiet', 'slow']);
    expect(lines.find((l) => l['stepId'] === 'broken')).toMatchObject({
      level: 'info',
      errors: expect.any(Number),
    });
    const runs = counters('broken').runs;
    await new Promise((r) => setTimeout(r, 100));
    expect(counters('broken').runs).toBe(runs);
  });
});

const unsupported = {
  workflows: [
    {
      name: 'unsupported',
      steps: [
        {
          stepId: 'first',
          trigger: { runOnce: true },
          resultsProcessor: { script: "context.diagnosticLog('first run')" },
        },
        {
          stepId: 'watch',
          trigger: {
            fileWatcher: { bootstrapFileId: 'inbox', eventSplitter: '\\n' },
          },
          resultsProcessor: { script: "const f = context.files('inbox'); context.setBody(f.list())" },
        },
        {
          stepId: 'compress',
          resultsProcessor: { script: "context.bytes().gzip(context.bytes().createFromString('x'))" },
        },
        {
          stepId: 'fine',
          trigger: { http: { server: 'api', method: 'GET', path: '/fine' } },
          resultsProcessor: { script: 'context.setBody(String(Math.sign(-3)))' },
        },
      ],
    },
  ],
};

describe('start-up report', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    a = await startAgent(keys, [
      makeRecord(keys, writePackage(dir, keys, { workflow: unsupported }), {
        licensing: { licenseHost: 'https://licence.example' },
        frequency: 0,
        reloadTimeout: 5000,
        agentControl: { workflowCanShutdownAgent: 'false' },
        allowFileAccess: [{ id: 'inbox', directoryOrFile: '/tmp/inbox', READ: true }],
        workflow: { outputs: [{ id: 'o', enabled: 'false' }], timers: { staggerPct: 10 } },
        errorHandling: { enableLocalLogging: true, redactionPatterns: ['x+'] },
      }),
    ]);
    await until(() => parse(a).some((l) => l['msg'] === 'first run'), 10_000);
  });
  afterAll(() => a.close());

  it('warns once per unsupported feature, before any step runs', () => {
    const lines = parse(a);
    const warnings = lines.filter((l) => l['msg'] === 'unsupported feature');
    const key = (k: unknown, n: unknown, st: unknown) => `${String(k)} ${String(n)} ${String(st)}`;
    expect(warnings.map((w) => key(w['kind'], w['name'], w['stepId'])).sort()).toEqual(
      [
        key('bootstrap-field', 'licensing', undefined),
        key('bootstrap-field', 'reloadTimeout', undefined),
        key('bootstrap-field', 'errorHandling.redactionPatterns', undefined),
        key('bootstrap-field', 'workflow.outputs', undefined),
      ].sort(),
    );
    for (const w of warnings) expect(w).toMatchObject({ level: 'warn', deploymentId: 'dep-1' });
    const firstRun = lines.findIndex((l) => l['msg'] === 'first run');
    expect(lines.findLastIndex((l) => l['msg'] === 'unsupported feature')).toBeLessThan(firstRun);
  });

  it('says once, in one short line, how many behaviours deliberately differ from the reference agent', () => {
    const info = parse(a).filter((l) => String(l['msg']).includes('deliberate differences'));
    expect(info).toHaveLength(1);
    expect(info[0]).toEqual({
      ts: expect.any(String),
      level: 'info',
      msg: `${DELIBERATE_DIFFERENCES.length} deliberate differences from the reference agent; see apps/agent-runtime/README.md (debug level lists them)`,
    });
  });

  it('takes its context-call names from the engine list', () => {
    const names = parse(a)
      .filter((l) => l['kind'] === 'context-call')
      .map((l) => l['name']);
    for (const n of names) expect(UNSUPPORTED_CONTEXT_CALLS.map((c) => c.call)).toContain(n);
  });
});

describe('createOutput levels', () => {
  it('drops lines below the level and always writes metrics', () => {
    const lines: string[] = [];
    const out = createOutput((l) => lines.push(l), new Redactor(), undefined, 'warn');
    out.debug('d');
    out.info('i');
    out.warn('w');
    out.error('e');
    out.workflowLog('dep', { level: 'info', message: 'wf', source: 'console' });
    out.metric('dep', { key: 'k', value: 1, timestamp: 0, dimensions: {} });
    expect(lines.map((l) => (JSON.parse(l) as Line)['msg'] ?? 'metric')).toEqual(['w', 'e', 'metric']);
  });
});
