import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { compileWorkflow, hashWorkflow } from '../src/index.js';
import { reformat, workflowFile } from './arbitraries.js';
import { RUNS } from './fixtures.js';

const none = { resourceDirs: [] };

describe('compileWorkflow and hashWorkflow (properties)', () => {
  test.prop([workflowFile, fc.integer()], { numRuns: RUNS })(
    'the hash does not depend on member order or whitespace',
    async (wf, seed) => {
      const a = hashWorkflow((await compileWorkflow(JSON.stringify(wf), none)).workflow);
      const b = hashWorkflow((await compileWorkflow(reformat(wf, seed), none)).workflow);
      expect(b).toBe(a);
    },
  );

  test.prop([workflowFile], { numRuns: RUNS })('compile is idempotent', async (wf) => {
    const once = (await compileWorkflow(wf, none)).workflow;
    const twice = (await compileWorkflow(once, none)).workflow;
    expect(twice).toEqual(once);
    expect(hashWorkflow(twice)).toBe(hashWorkflow(once));
  });

  test.prop([workflowFile, fc.string({ minLength: 1, maxLength: 5 })], { numRuns: RUNS })(
    'the hash changes when a script changes',
    async (wf, suffix) => {
      const a = hashWorkflow((await compileWorkflow(wf, none)).workflow);
      const changed = structuredClone(wf) as {
        workflows: { steps: { resultsProcessor: Record<string, unknown> }[] }[];
      };
      changed.workflows[0]!.steps[0]!.resultsProcessor = { script: `/*${suffix}*/` + JSON.stringify(a) };
      const b = hashWorkflow((await compileWorkflow(changed, none)).workflow);
      expect(b).not.toBe(a);
    },
  );
});
