import { describe, expect, it } from 'vitest';
import { ENGINE_ERROR_CODES, EngineError, MAX_LIMITS, createWorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

async function run(script: string, body?: string) {
  const host = fakeHost();
  const engine = await createWorkflowEngine(workflow([scriptStep('s', script)]), { host, data: {} });
  return { host, result: await engine.runStep('s', input(body)) };
}

describe('createWorkflowEngine', () => {
  it('lists enabled steps with their triggers', async () => {
    const wf = workflow([
      scriptStep('a', '', { trigger: { runOnce: true } }),
      scriptStep('b', '', { enabled: 'false' }),
      scriptStep('c', ''),
    ]);
    const engine = await createWorkflowEngine(wf, { host: fakeHost(), data: {} });
    expect(engine.steps).toEqual([
      { stepId: 'a', workflowIndex: 0, workflow: 'test', trigger: { runOnce: true }, type: 'scripted' },
      { stepId: 'c', workflowIndex: 0, workflow: 'test', trigger: undefined, type: 'scripted' },
    ]);
  });

  it('rejects a value that is not a workflow file with ENGINE_INVALID_WORKFLOW', async () => {
    await expect(createWorkflowEngine({ nope: 1 }, { host: fakeHost(), data: {} })).toThrowCode(
      EngineError,
      'ENGINE_INVALID_WORKFLOW',
    );
  });

  it('rejects an uncompiled resource reference with ENGINE_INVALID_WORKFLOW', async () => {
    const wf = workflow([{ stepId: 'a', resultsProcessor: { resource: '/x.js' } }]);
    await expect(createWorkflowEngine(wf, { host: fakeHost(), data: {} })).toThrowCode(
      EngineError,
      'ENGINE_INVALID_WORKFLOW',
    );
  });

  it('rejects a duplicate stepId with ENGINE_INVALID_WORKFLOW', async () => {
    const wf = workflow([scriptStep('a', ''), scriptStep('a', '')]);
    await expect(createWorkflowEngine(wf, { host: fakeHost(), data: {} })).toThrowCode(
      EngineError,
      'ENGINE_INVALID_WORKFLOW',
    );
  });

  it('exports the code list', () => {
    expect(ENGINE_ERROR_CODES).toContain('ENGINE_TIMEOUT');
    expect(new EngineError('ENGINE_MEMORY', 'x').name).toBe('EngineError');
  });
});

describe('runStep', () => {
  it('runs a script processor and returns body, status, headers and properties', async () => {
    const { result } = await run(
      "context.setBody('got ' + context.getBody()); context.setProperty('status_code', '201'); context.setHeader('X-A', 'b');",
      'in',
    );
    expect(result).toEqual({
      status: 201,
      body: 'got in',
      headers: { 'X-A': 'b' },
      properties: { status_code: '201' },
      errored: false,
      errors: [],
    });
  });

  it('rejects an unknown step with ENGINE_STEP_NOT_FOUND', async () => {
    const engine = await createWorkflowEngine(workflow([scriptStep('a', '')]), {
      host: fakeHost(),
      data: {},
    });
    await expect(engine.runStep('zzz', input())).toThrowCode(EngineError, 'ENGINE_STEP_NOT_FOUND');
  });

  it('turns a thrown error into an errored result', async () => {
    const { result } = await run("throw new TypeError('bad input')");
    expect(result.errored).toBe(true);
    expect(result.errors).toEqual(['resultsProcessor: TypeError: bad input']);
  });

  it('marks the run errored on addSystemError and keeps running the script', async () => {
    const { result } = await run("context.addSystemError('broken'); context.setBody('after')");
    expect(result).toMatchObject({ errored: true, errors: ['broken'], body: 'after' });
  });

  it("cuts a running step's sleep when the engine is disposed (issue 27: oapp test ends with its last test)", async () => {
    const engine = await createWorkflowEngine(
      workflow([scriptStep('nap', "context.sleep(10000); context.setBody('woke')")]),
      { host: fakeHost(), data: {} },
    );
    const started = performance.now();
    const running = engine.runStep('nap', input());
    setTimeout(() => engine.dispose(), 200);
    const result = await running;
    expect(performance.now() - started).toBeLessThan(5000); // not the 10 s sleep
    expect(result.errored).toBe(true);
    expect(result.errors.join(' ')).toContain('ENGINE_DISPOSED');
  });

  it('rejects runs after dispose with ENGINE_DISPOSED', async () => {
    const engine = await createWorkflowEngine(workflow([scriptStep('a', '')]), {
      host: fakeHost(),
      data: {},
    });
    engine.dispose();
    await expect(engine.runStep('a', input())).toThrowCode(EngineError, 'ENGINE_DISPOSED');
  });

  it('loads httpFile steps with their type; runStep rejects them with ENGINE_HOST_SERVED', async () => {
    const trigger = { http: { server: 'web', method: 'GET', path: '/static/.*' } };
    const wf = workflow([scriptStep('file', '', { type: 'httpFile', trigger })]);
    const engine = await createWorkflowEngine(wf, { host: fakeHost(), data: {} });
    expect(engine.steps).toEqual([
      { stepId: 'file', workflowIndex: 0, workflow: 'test', trigger, type: 'httpFile' },
    ]);
    await expect(engine.runStep('file', input())).toThrowCode(EngineError, 'ENGINE_HOST_SERVED');
  });

  it('answers sendToStep into an httpFile step with an errored result naming ENGINE_HOST_SERVED', async () => {
    const wf = workflow([
      scriptStep('file', '', { type: 'httpFile' }),
      scriptStep(
        'caller',
        "const r = context.sendToStep('file', 'x'); context.setBody(String(r.isErrored()) + ' ' + r.getAllErrors().join());",
      ),
    ]);
    const engine = await createWorkflowEngine(wf, { host: fakeHost(), data: {} });
    const result = await engine.runStep('caller', input());
    expect(result.body).toMatch(/^true .*ENGINE_HOST_SERVED/);
  });

  it('rejects out-of-range limits with a RangeError', async () => {
    await expect(
      createWorkflowEngine(workflow([scriptStep('a', '')]), {
        host: fakeHost(),
        data: {},
        limits: { timeMs: -1 },
      }),
    ).rejects.toBeInstanceOf(RangeError);
    for (const splitTimeMs of [0, 1.5, MAX_LIMITS.splitTimeMs + 1])
      await expect(
        createWorkflowEngine(workflow([scriptStep('a', '')]), {
          host: fakeHost(),
          data: {},
          limits: { splitTimeMs },
        }),
      ).rejects.toBeInstanceOf(RangeError);
  });

  it('returns at once for a concurrent run of a singleThreaded "return" step', async () => {
    const wf = workflow([
      scriptStep('one', "context.sleep(200); context.setBody('ran')", { singleThreaded: 'return' }),
    ]);
    const engine = await createWorkflowEngine(wf, { host: fakeHost(), data: {} });
    const [first, second] = await Promise.all([
      engine.runStep('one', input()),
      engine.runStep('one', input()),
    ]);
    expect(first.body).toBe('ran');
    expect(second).toEqual({
      status: undefined,
      body: undefined,
      headers: {},
      properties: { 'engine.skipped': 'singleThreaded' },
      errored: false,
      errors: [],
    });
    expect((await engine.runStep('one', input())).body).toBe('ran');
  });
});
