import { describe, expect, it } from 'vitest';
import {
  MAX_SEND_DEPTH,
  createWorkflowEngine,
  listSteps,
  type DeploymentCall,
  type StepResult,
} from '../src/index.js';
import { codedError, fakeHost, input, scriptStep, workflow } from './fake-host.js';

const result = (over: Partial<StepResult> = {}): StepResult => ({
  status: undefined,
  body: undefined,
  headers: {},
  properties: {},
  errored: false,
  errors: [],
  ...over,
});

async function engineWith(steps: unknown[], send?: (call: DeploymentCall) => Promise<StepResult>) {
  const host = fakeHost();
  if (send) host.sendToDeployment = send;
  return createWorkflowEngine(workflow(steps), { host, data: {} });
}

describe('sendToStep(accessId, stepId, body) (SPEC.md §5.5)', () => {
  it('hands the three arguments and the depth to the host and returns the callee result', async () => {
    const calls: DeploymentCall[] = [];
    const engine = await engineWith(
      [
        scriptStep(
          'caller',
          "const r = context.sendToStep('billing', 'charge', '{\"n\":1}'); context.setBody([r.getBody(), r.getProperty('p'), r.getProperty('status_code'), r.getHeader('x-out'), r.isErrored()].join('|'))",
        ),
      ],
      (call) => {
        calls.push(call);
        return Promise.resolve(
          result({ body: 'charged', status: 201, properties: { p: 'q' }, headers: { 'X-Out': 'o' } }),
        );
      },
    );
    const r = await engine.runStep('caller', input());
    expect(r.errors).toEqual([]);
    expect(r.body).toBe('charged|q|201|["o"]|false');
    expect(calls).toEqual([{ accessId: 'billing', stepId: 'charge', body: '{"n":1}', depth: 1 }]);
    engine.dispose();
  });

  it('throws the host refusal code into the script; the rest of the step does not run', async () => {
    const engine = await engineWith(
      [
        scriptStep(
          'caller',
          "try { context.sendToStep('a', 's', 'b'); } catch (e) { context.setProperty('code', e.code); } context.sendToStep('a', 's', 'b'); context.setBody('after');",
        ),
      ],
      () => Promise.reject(codedError('AGENT_DEPLOYMENT_ACCESS_DENIED', 'call "a" refused')),
    );
    const r = await engine.runStep('caller', input());
    expect(r.errored).toBe(true);
    expect(r.properties['code']).toBe('AGENT_DEPLOYMENT_ACCESS_DENIED');
    expect(r.errors.join()).toContain('AGENT_DEPLOYMENT_ACCESS_DENIED');
    expect(r.body).toBeUndefined();
    engine.dispose();
  });

  it('is ENGINE_UNSUPPORTED on a host without sendToDeployment', async () => {
    const engine = await engineWith([
      scriptStep(
        'caller',
        "try { context.sendToStep('a', 's', 'b'); } catch (e) { context.setBody(e.code); }",
      ),
    ]);
    expect((await engine.runStep('caller', input())).body).toBe('ENGINE_UNSUPPORTED');
    engine.dispose();
  });

  it('is ENGINE_NOT_PERMITTED from an authentication context (nothing reaches the host)', async () => {
    const calls: DeploymentCall[] = [];
    const engine = await engineWith(
      [
        {
          stepId: 'caller',
          authenticationProcessor: {
            script:
              "let code = 'none'; try { context.sendToStep('a', 's', 'b'); } catch (e) { code = e.code; } if (code !== 'ENGINE_NOT_PERMITTED') throw new Error('got ' + code);",
          },
          resultsProcessor: { script: "context.setBody('done')" },
        },
      ],
      (call) => {
        calls.push(call);
        return Promise.resolve(result());
      },
    );
    const r = await engine.runStep('caller', input());
    expect(r.errors).toEqual([]);
    expect(r.body).toBe('done');
    expect(calls).toEqual([]);
    engine.dispose();
  });

  it('keeps the headers form: sendToStep(stepId, body, { … }) stays in the deployment', async () => {
    const calls: DeploymentCall[] = [];
    const engine = await engineWith(
      [
        scriptStep('caller', "context.setBody(context.sendToStep('callee', 'x', { 'x-a': '1' }).getBody())"),
        scriptStep('callee', "context.setBody('local ' + context.getHeader('x-a'))"),
      ],
      (call) => {
        calls.push(call);
        return Promise.resolve(result());
      },
    );
    expect((await engine.runStep('caller', input())).body).toBe('local ["1"]');
    expect(calls).toEqual([]);
    engine.dispose();
  });
});

describe('runStep options.depth', () => {
  it('counts the callee run on from the depth the caller reached (ENGINE_SEND_DEPTH at the limit)', async () => {
    const engine = await engineWith([
      scriptStep('a', "context.setBody(context.sendToStep('b', 'x').getAllErrors().join())"),
      scriptStep('b', "context.setBody('b ran')"),
    ]);
    const deep = await engine.runStep('a', input(), { depth: MAX_SEND_DEPTH });
    expect(deep.errored).toBe(true);
    expect(deep.errors.join()).toContain('ENGINE_SEND_DEPTH');
    const ok = await engine.runStep('a', input(), { depth: MAX_SEND_DEPTH - 1 });
    expect(ok.errors).toEqual([]);
    engine.dispose();
  });

  it('refuses a depth outside 0 … MAX_SEND_DEPTH with a RangeError', async () => {
    const engine = await engineWith([scriptStep('a', "context.setBody('x')")]);
    expect(() => engine.runStep('a', input(), { depth: MAX_SEND_DEPTH + 1 })).toThrow(RangeError);
    expect(() => engine.runStep('a', input(), { depth: -1 })).toThrow(RangeError);
    engine.dispose();
  });
});

describe('listSteps', () => {
  it('lists the enabled steps as engine.steps does, without an engine', async () => {
    const wf = workflow([
      scriptStep('a', 'x', { trigger: { deploymentAccess: { ids: ['in'] } } }),
      scriptStep('off', 'x', { enabled: false }),
      scriptStep('b', 'x'),
    ]);
    const engine = await createWorkflowEngine(wf, { host: fakeHost(), data: {} });
    expect(listSteps(wf)).toEqual(engine.steps);
    expect(() => listSteps({})).toThrowCode('EngineError', 'ENGINE_INVALID_WORKFLOW');
    engine.dispose();
  });
});
