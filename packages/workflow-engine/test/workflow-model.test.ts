import { describe, expect, it } from 'vitest';
import { createWorkflowEngine } from '../src/index.js';
import { flattenProcessor, loadWorkflow, mergeData } from '../src/workflow-model.js';
import { fakeHost, input } from './fake-host.js';

describe('mergeData (docs/interfaces.md §4.6)', () => {
  it('merges objects deeply and lets arrays and scalars of the child replace the parent', () => {
    expect(mergeData({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3], e: 2 }, d: 'x' })).toEqual({
      a: { b: 1, c: [3], e: 2 },
      d: 'x',
    });
  });

  it('keeps a __proto__ key as data (S4)', () => {
    const merged = mergeData({}, JSON.parse('{"__proto__": {"polluted": true}}'));
    expect(Object.keys(merged)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('flattenProcessor (docs/interfaces.md §4.3)', () => {
  it('flattens nested chains in order and merges data down', () => {
    const units = flattenProcessor(
      {
        data: { a: 1 },
        processors: [
          { script: 'one', resourceName: '/r.js' },
          { data: { a: 2 }, processors: [{ script: 'two', data: { b: 3 } }] },
        ],
      },
      { top: true },
      'p',
    );
    expect(units).toEqual([
      { script: 'one', data: { top: true, a: 1 } },
      { script: 'two', data: { top: true, a: 2, b: 3 } },
    ]);
  });
});

describe('loadWorkflow', () => {
  it('applies file and workflow defaultStepProperties under the step and skips disabled workflows', () => {
    const steps = loadWorkflow(
      {
        defaultStepProperties: { httpTimeout: 1000, data: { d: 'file' } },
        workflows: [
          {
            name: 'w',
            defaultStepProperties: { httpTimeout: 2000 },
            steps: [{ stepId: 'a' }, { stepId: 'b', httpTimeout: 3000 }],
          },
          { name: 'off', enabled: false, steps: [{ stepId: 'c' }] },
        ],
      },
      {},
    );
    expect([...steps.keys()]).toEqual(['a', 'b']);
    expect(steps.get('a')?.httpTimeout).toBe(2000);
    expect(steps.get('b')?.httpTimeout).toBe(3000);
  });
});

describe('data merge chain', () => {
  it('merges bootstrap → file → workflow → step → processor → nested processor data', async () => {
    const wf = {
      data: { level: 'file', file: 1, deep: { f: 1 } },
      workflows: [
        {
          name: 'w',
          data: { level: 'workflow', wf: 1, deep: { w: 1 } },
          steps: [
            {
              stepId: 's',
              data: { level: 'step', step: 1 },
              resultsProcessor: {
                data: { level: 'processor', proc: 1 },
                processors: [{ data: { level: 'nested' }, script: 'context.setBody(context.getData())' }],
              },
            },
          ],
        },
      ],
    };
    const engine = await createWorkflowEngine(wf, {
      host: fakeHost(),
      data: { level: 'bootstrap', boot: 1, deep: { b: 1 } },
    });
    const body = (await engine.runStep('s', input())).body as string;
    expect(JSON.parse(body)).toEqual({
      level: 'nested',
      boot: 1,
      file: 1,
      wf: 1,
      step: 1,
      proc: 1,
      deep: { b: 1, f: 1, w: 1 },
    });
  });
});
