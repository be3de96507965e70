import { describe, expect, it } from 'vitest';
import { EngineError, createWorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep } from './fake-host.js';

/** Two workflows that both define `shared` (ADR 0060); `only-b` exists in the second only. */
function file(extraA: unknown[] = [], extraB: unknown[] = []): unknown {
  return {
    workflows: [
      {
        name: 'A',
        steps: [
          scriptStep('caller', "context.setBody(context.sendToStep('shared', 'x').getBody())"),
          scriptStep('shared', "context.setBody('A:' + context.getBody())"),
          ...extraA,
        ],
      },
      {
        name: 'B',
        steps: [
          scriptStep('caller', "context.setBody(context.sendToStep('shared', 'y').getBody())"),
          scriptStep('shared', "context.setBody('B:' + context.getBody())"),
          scriptStep('only-b', "context.setBody('only-b')"),
          ...extraB,
        ],
      },
    ],
  };
}

async function engineFor(wf: unknown) {
  return createWorkflowEngine(wf, { host: fakeHost(), data: {} });
}

describe('duplicate stepIds across workflows (ADR 0060)', () => {
  it('loads both, lists both with their workflow, and runs each through its StepInfo', async () => {
    const engine = await engineFor(file());
    const shared = engine.steps.filter((s) => s.stepId === 'shared');
    expect(shared.map((s) => [s.workflow, s.workflowIndex])).toEqual([
      ['A', 0],
      ['B', 1],
    ]);
    expect((await engine.runStep(shared[0]!, input('1'))).body).toBe('A:1');
    expect((await engine.runStep(shared[1]!, input('2'))).body).toBe('B:2');
    expect((await engine.runStep({ stepId: 'shared', workflowIndex: 1 }, input('3'))).body).toBe('B:3');
  });

  it('resolves sendToStep in the caller workflow first', async () => {
    const engine = await engineFor(file());
    const callers = engine.steps.filter((s) => s.stepId === 'caller');
    expect((await engine.runStep(callers[0]!, input())).body).toBe('A:x');
    expect((await engine.runStep(callers[1]!, input())).body).toBe('B:y');
  });

  it('falls back to the whole file when the name is unique there', async () => {
    const engine = await engineFor(
      file([scriptStep('to-b', "context.setBody(context.sendToStep('only-b', '').getBody())")]),
    );
    expect((await engine.runStep('to-b', input())).body).toBe('only-b');
  });

  it('reports a name used by several other workflows as ENGINE_STEP_AMBIGUOUS', async () => {
    const wf = file();
    (wf as { workflows: unknown[] }).workflows.push({
      name: 'C',
      steps: [
        scriptStep(
          'c',
          "const r = context.sendToStep('shared', ''); context.setBody(r.isErrored() + ' ' + r.getAllErrors().join())",
        ),
      ],
    });
    const engine = await engineFor(wf);
    const body = (await engine.runStep('c', input())).body as string;
    expect(body).toMatch(/^true ENGINE_STEP_AMBIGUOUS/);
    await expect(engine.runStep('shared', input())).toThrowCode(EngineError, 'ENGINE_STEP_AMBIGUOUS');
    await expect(engine.runStep({ stepId: 'shared', workflowIndex: 2 }, input())).toThrowCode(
      EngineError,
      'ENGINE_STEP_NOT_FOUND',
    );
  });

  it('still runs a bare unique stepId, and a duplicate whose twin is disabled', async () => {
    const wf = {
      workflows: [
        { name: 'A', steps: [scriptStep('s', "context.setBody('A')")] },
        { name: 'B', enabled: false, steps: [scriptStep('s', "context.setBody('B')")] },
      ],
    };
    expect((await (await engineFor(wf)).runStep('s', input())).body).toBe('A');
  });

  it('refuses a stepId used twice in one workflow (ENGINE_INVALID_WORKFLOW)', async () => {
    const wf = { workflows: [{ name: 'A', steps: [scriptStep('s', ''), scriptStep('s', '')] }] };
    await expect(engineFor(wf)).toThrowCode(EngineError, 'ENGINE_INVALID_WORKFLOW');
  });

  it('keeps step properties and authentication properties apart per workflow', async () => {
    const counter =
      "const p = context.getStepProperties(); p.set('n', String(Number(p.get('n') || 0) + 1)); context.setBody(p.get('n'))";
    // Each login caches its own token on "login" and checks it reads back its own (errors carry the answer:
    // an authenticationProcessor's other changes are discarded).
    const auth = (v: string) => ({
      stepId: 'login',
      authenticationProcessor: {
        script: `if (context.getAuthenticationPropertiesFromStep('login', 'tok') === null) context.setAuthenticationPropertiesOnStep('login', 60000, 'tok', '${v}'); context.addSystemError(String(context.getAuthenticationPropertiesFromStep('login', 'tok') === '${v}'));`,
      },
    });
    const wf = {
      workflows: [
        { name: 'A', steps: [scriptStep('count', counter), auth('token-A')] },
        { name: 'B', steps: [scriptStep('count', counter), auth('token-B')] },
      ],
    };
    const engine = await engineFor(wf);
    const [countA, loginA, countB, loginB] = engine.steps;
    expect((await engine.runStep(countA!, input())).body).toBe('1');
    expect((await engine.runStep(countA!, input())).body).toBe('2');
    expect((await engine.runStep(countB!, input())).body).toBe('1');
    expect((await engine.runStep(loginA!, input())).errors).toEqual(['true']);
    expect((await engine.runStep(loginB!, input())).errors).toEqual(['true']);
    expect((await engine.runStep(loginA!, input())).errors).toEqual(['true']);
  });

  it('treats "resource": "" beside a script as absent', async () => {
    const wf = {
      workflows: [
        {
          name: 'A',
          steps: [{ stepId: 's', resultsProcessor: { script: "context.setBody('ok')", resource: '' } }],
        },
      ],
    };
    expect((await (await engineFor(wf)).runStep('s', input())).body).toBe('ok');
    const alone = {
      workflows: [{ name: 'A', steps: [{ stepId: 's', resultsProcessor: { resource: '' } }] }],
    };
    await expect(engineFor(alone)).toThrowCode(EngineError, 'ENGINE_INVALID_WORKFLOW');
  });
});
