import { describe, expect, it } from 'vitest';
import { MAX_SEND_DEPTH, createWorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

async function engineWith(steps: unknown[], limits?: { timeMs?: number }) {
  const host = fakeHost();
  const engine = await createWorkflowEngine(workflow(steps), { host, data: {}, limits });
  return { host, engine };
}

describe('sendToStep (docs/interfaces.md §5.4)', () => {
  it('runs the callee and returns its body, properties, headers and error state', async () => {
    const { engine } = await engineWith([
      scriptStep(
        'caller',
        "const r = context.sendToStep('callee', 'hi', { 'X-In': 'v' }); context.setBody([r.getBody(), r.getProperty('p'), r.getHeader('x-out'), r.isErrored(), r.getAllErrors().length, r.getProperty('none')].join('|'))",
      ),
      scriptStep(
        'callee',
        "context.setBody(context.getBody() + ' ' + context.getHeader('x-in') + ' ' + context.getPassedMessageAsString()); context.setProperty('p', 'q'); context.setHeader('X-Out', 'o')",
      ),
    ]);
    expect((await engine.runStep('caller', input())).body).toBe('hi ["v"] hi|q|["o"]|false|0|');
  });

  it('reports a failing callee as errored to the caller', async () => {
    const { engine } = await engineWith([
      scriptStep(
        'caller',
        "const r = context.sendToStep('callee', 'x'); context.setBody(r.isErrored() + ' ' + r.getAllErrors().join())",
      ),
      scriptStep('callee', "throw new Error('callee broke')"),
    ]);
    expect((await engine.runStep('caller', input())).body).toBe('true resultsProcessor: callee broke');
  });

  it('logs an errored callee at debug level even when the caller ignores the result', async () => {
    const { host, engine } = await engineWith([
      scriptStep('caller', "context.sendToStep('callee', 'x'); context.setBody('done')"),
      scriptStep('callee', "context.addSystemError('callee gave up')"),
      scriptStep('fine', "context.sendToStep('ok', 'x')"),
      scriptStep('ok', "context.setBody('y')"),
    ]);
    const r = await engine.runStep('caller', input());
    expect([r.errored, r.body]).toEqual([false, 'done']);
    expect(host.logs).toEqual([
      {
        level: 'debug',
        message: 'sendToStep from "caller": step errored: callee gave up',
        stepId: 'callee',
        source: 'engine',
      },
    ]);
    await engine.runStep('fine', input());
    expect(host.logs).toHaveLength(1);
  });

  it('reports a callee timeout as errored; the caller keeps its own time budget', async () => {
    const { engine } = await engineWith(
      [
        scriptStep(
          'caller',
          "const r = context.sendToStep('spin', 'x'); context.setBody(r.getAllErrors().join())",
        ),
        scriptStep('spin', 'while (true) {}'),
      ],
      { timeMs: 300 },
    );
    expect((await engine.runStep('caller', input())).body).toMatch(/^ENGINE_TIMEOUT: /);
  });

  it('reports an unknown step as errored with ENGINE_STEP_NOT_FOUND', async () => {
    const { engine } = await engineWith([
      scriptStep('caller', "context.setBody(context.sendToStep('nope', 'x').getAllErrors()[0])"),
    ]);
    expect((await engine.runStep('caller', input())).body).toMatch(/^ENGINE_STEP_NOT_FOUND: /);
  });

  it(`stops recursion after ${MAX_SEND_DEPTH} nested calls with ENGINE_SEND_DEPTH`, async () => {
    const { engine } = await engineWith([
      scriptStep(
        'loop',
        "const r = context.sendToStep('loop', 'x'); context.setBody(r.isErrored() ? r.getAllErrors()[0] : r.getBody())",
      ),
    ]);
    const r = await engine.runStep('loop', input());
    expect(r.body).toMatch(/ENGINE_SEND_DEPTH: sendToStep: more than 8 nested step calls/);
  });
});

describe('sendToStepAndForget', () => {
  it('starts the step and returns at once', async () => {
    const { host, engine } = await engineWith([
      scriptStep('caller', "context.sendToStepAndForget('bg', 'payload'); context.setBody('returned')"),
      scriptStep('bg', "context.diagnosticLog('bg got ' + context.getBody())"),
    ]);
    expect((await engine.runStep('caller', input())).body).toBe('returned');
    await expect.poll(() => host.logs.map((l) => l.message)).toContain('bg got payload');
  });

  it('logs a failure of the forgotten step', async () => {
    const { host, engine } = await engineWith([
      scriptStep('caller', "context.sendToStepAndForget('bg', 'x')"),
      scriptStep('bg', "throw new Error('bg broke')"),
    ]);
    await engine.runStep('caller', input());
    await expect
      .poll(() => host.logs)
      .toContainEqual({
        level: 'error',
        message: 'resultsProcessor: bg broke',
        stepId: 'bg',
        source: 'engine',
      });
  });
});
