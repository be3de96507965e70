import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  WorkflowError,
  canonicalize,
  compileWorkflow,
  hashWorkflow,
  type CompiledWorkflow,
} from '../src/index.js';
import { reformat } from './arbitraries.js';
import { RESOURCE_DIRS, TESTDATA, oneStep, scratch } from './fixtures.js';

const golden = JSON.parse(readFileSync(join(TESTDATA, 'golden', 'hashes.json'), 'utf8')) as Record<
  string,
  string
>;
const compile = async (input: unknown, resourceDirs = RESOURCE_DIRS) =>
  (await compileWorkflow(input, { resourceDirs })).workflow;

describe('hashWorkflow', () => {
  it.each(['health.workflow.json', 'invoice-upload.workflow.json', 'timer-report.workflow.json'])(
    'matches the golden hash of %s',
    async (name) => {
      const wf = await compile(readFileSync(join(TESTDATA, 'workflows', name)));
      expect(hashWorkflow(wf)).toBe(golden[name]);
      expect(hashWorkflow(wf)).toMatch(/^[0-9a-f]{64}$/);
    },
  );

  it('is the same for a reformatted source with other member order, whitespace and comments', async () => {
    const source = JSON.parse(
      readFileSync(join(TESTDATA, 'workflows', 'invoice-upload.workflow.json'), 'utf8'),
    ) as Record<string, unknown>;
    const base = hashWorkflow(await compile(source));
    for (const seed of [1, 2, 3, 42]) expect(hashWorkflow(await compile(reformat(source, seed)))).toBe(base);
    expect(hashWorkflow(await compile({ ...source, comment: 'a different comment' }))).toBe(base);
  });

  it('is the same for a resource written with or without the leading slash', async () => {
    const a = hashWorkflow(await compile(oneStep({ resource: '/general/clear-headers.js' })));
    const b = hashWorkflow(await compile(oneStep({ resource: 'general/clear-headers.js' })));
    expect(b).toBe(a);
  });

  it('hashes exactly the canonical text when it reaches the hash in many pieces', async () => {
    // Large enough that the canonical text goes to the hash in dozens of pieces, with non-ASCII text and
    // surrogate pairs across the piece boundaries.
    const steps = Array.from({ length: 400 }, (_, i) => ({
      stepId: `s${i}`,
      trigger: { timer: { period: 1000 + i } },
      resultsProcessor: {
        script: `context.setBody('é😀 ${'x'.repeat(i % 97)}')`,
        data: { k: ['ü', i, 1.5] },
      },
    }));
    const wf = await compile({ workflows: [{ name: 'big', steps }] });
    const text = canonicalize(wf);
    expect(text.length).toBeGreaterThan(64 * 1024);
    expect(hashWorkflow(wf)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
  });

  it('changes when one byte of an inline script changes', async () => {
    const a = hashWorkflow(await compile(oneStep({ script: 'context.setBody(1)' })));
    const b = hashWorkflow(await compile(oneStep({ script: 'context.setBody(2)' })));
    expect(a).not.toBe(b);
  });

  it('changes when data, a trigger or a number changes', async () => {
    const h = async (extra: Record<string, unknown>) =>
      hashWorkflow(await compile(oneStep({ script: 'x' }, extra)));
    const hashes = await Promise.all([
      h({}),
      h({ data: { a: 1 } }),
      h({ data: { a: '1' } }),
      h({ trigger: { http: { server: 'api', path: '/a', multiPartUploadByteLimit: 1024 } } }),
      h({ trigger: { http: { server: 'api', path: '/a', multiPartUploadByteLimit: 1025 } } }),
      h({ httpTimeout: 0 }),
    ]);
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  describe('inlined resources', () => {
    const s = scratch({ 'r/lib.js': 'context.setBody("v1");' });
    afterAll(s.cleanup);

    it('changes when the content of an inlined resource changes, with the workflow text unchanged', async () => {
      const dirs = [join(s.root, 'r')];
      const wf = JSON.stringify(oneStep({ resource: '/lib.js' }));
      const before = hashWorkflow(await compile(wf, dirs));
      writeFileSync(join(s.root, 'r/lib.js'), 'context.setBody("v2");');
      expect(hashWorkflow(await compile(wf, dirs))).not.toBe(before);
    });
  });

  it('refuses a workflow that was not compiled with WORKFLOW_NOT_COMPILED', () => {
    expect(() => hashWorkflow(oneStep({ resource: '/a.js' }) as unknown as CompiledWorkflow)).toThrowCode(
      WorkflowError,
      'WORKFLOW_NOT_COMPILED',
    );
    expect(() => hashWorkflow({ comment: 'x', ...oneStep({ script: 'x' }) } as CompiledWorkflow)).toThrowCode(
      WorkflowError,
      'WORKFLOW_NOT_COMPILED',
    );
    expect(() => hashWorkflow('text' as unknown as CompiledWorkflow)).toThrowCode(
      WorkflowError,
      'WORKFLOW_NOT_COMPILED',
    );
  });

  it('refuses a value without a canonical form with WORKFLOW_VALUE_INVALID', () => {
    expect(() =>
      hashWorkflow(oneStep({ script: 'x' }, { data: { n: NaN } }) as unknown as CompiledWorkflow),
    ).toThrowCode(WorkflowError, 'WORKFLOW_VALUE_INVALID');
  });
});
