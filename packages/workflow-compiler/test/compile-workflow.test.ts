import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowError, compileWorkflow, validateWorkflow } from '../src/index.js';
import { goldenText } from '../testdata/generate.js';
import { RESOURCE_DIRS, TESTDATA, oneStep, scratch } from './fixtures.js';

const opts = { resourceDirs: RESOURCE_DIRS };
const size = (dir: number, path: string): number => statSync(join(RESOURCE_DIRS[dir]!, path)).size;
const fixtures = readdirSync(join(TESTDATA, 'workflows')).sort();

describe('compileWorkflow', () => {
  it.each(fixtures)('compiles %s to its golden file', async (name) => {
    const { workflow } = await compileWorkflow(readFileSync(join(TESTDATA, 'workflows', name)), opts);
    const golden = readFileSync(
      join(TESTDATA, 'golden', name.replace('.workflow.json', '.compiled.json')),
      'utf8',
    );
    expect(goldenText(workflow)).toBe(golden);
  });

  it('removes structural comments but keeps comment keys inside data', async () => {
    const { workflow } = await compileWorkflow(
      readFileSync(join(TESTDATA, 'workflows', 'invoice-upload.workflow.json')),
      opts,
    );
    const text = JSON.stringify(workflow);
    expect(text).not.toContain('Owner: billing team');
    expect(text).not.toContain('5 MiB');
    expect(text).not.toContain('retry later on 429');
    expect((workflow.data as Record<string, unknown>)['comment']).toBe(
      'a data key named comment is data, not a comment',
    );
  });

  it('inlines resources from nested folders of two directories, first directory winning', async () => {
    const { workflow, resources } = await compileWorkflow(
      readFileSync(join(TESTDATA, 'workflows', 'invoice-upload.workflow.json')),
      opts,
    );
    expect(resources).toEqual([
      {
        path: '/httpserver/http-body-to-body.js',
        dir: RESOURCE_DIRS[0],
        bytes: size(0, '/httpserver/http-body-to-body.js'),
        references: 1,
      },
      {
        path: '/nested/deep/util/format-amount.js',
        dir: RESOURCE_DIRS[0],
        bytes: size(0, '/nested/deep/util/format-amount.js'),
        references: 1,
      },
      {
        path: '/general/clear-headers.js',
        dir: RESOURCE_DIRS[0],
        bytes: size(0, '/general/clear-headers.js'),
        references: 1,
      },
      {
        path: '/ledger/post-invoice.js',
        dir: RESOURCE_DIRS[1],
        bytes: size(1, '/ledger/post-invoice.js'),
        references: 1,
      },
      {
        path: '/shared/origin.js',
        dir: RESOURCE_DIRS[0],
        bytes: size(0, '/shared/origin.js'),
        references: 1,
      },
    ]);
    const step = workflow.workflows[0]!.steps[1]!;
    expect(step.urlGenerator).toEqual({
      script: readFileSync(join(RESOURCE_DIRS[1]!, 'ledger/post-invoice.js'), 'utf8'),
      resourceName: '/ledger/post-invoice.js',
    });
    expect(JSON.stringify(workflow)).toContain("context.setProperty('origin', 'community')");
    expect(JSON.stringify(workflow)).not.toContain('"resource"');
  });

  it('produces a workflow that validates and never references a file', async () => {
    for (const name of fixtures) {
      const { workflow } = await compileWorkflow(readFileSync(join(TESTDATA, 'workflows', name)), opts);
      expect(validateWorkflow(workflow)).toEqual(workflow);
    }
  });

  it('is idempotent on the fixtures', async () => {
    for (const name of fixtures) {
      const once = await compileWorkflow(readFileSync(join(TESTDATA, 'workflows', name)), opts);
      const twice = await compileWorkflow(JSON.stringify(once.workflow), { resourceDirs: [] });
      expect(twice.workflow).toEqual(once.workflow);
      expect(twice.resources).toEqual([]);
    }
  });

  it('drops "resource": "" beside an inline script: no file is read, the compiled form has no resource', async () => {
    const { workflow, resources } = await compileWorkflow(oneStep({ script: 'x', resource: '' }), {
      resourceDirs: [],
    });
    expect(resources).toEqual([]);
    expect(JSON.stringify(workflow)).not.toContain('"resource"');
    expect(workflow.workflows[0]!.steps[0]!.resultsProcessor).toEqual({ script: 'x' });
  });

  it('does not modify a value passed in', async () => {
    const input = oneStep({ resource: '/general/clear-headers.js', comment: 'c' });
    const copy = structuredClone(input);
    await compileWorkflow(input, opts);
    expect(input).toEqual(copy);
  });

  it('counts repeated references and reads each file once', async () => {
    const wf = oneStep({ processors: [{ resource: '/shared/origin.js' }, { resource: 'shared/origin.js' }] });
    const { resources } = await compileWorkflow(wf, opts);
    expect(resources).toEqual([
      {
        path: '/shared/origin.js',
        dir: RESOURCE_DIRS[0],
        bytes: size(0, '/shared/origin.js'),
        references: 2,
      },
    ]);
  });

  it('inlines resources under defaultStepProperties and httpStatusHandling too', async () => {
    const wf = {
      defaultStepProperties: { httpConnectFailedProcessor: { resource: '/general/clear-headers.js' } },
      workflows: [
        {
          name: 'w',
          defaultStepProperties: { payloadGenerator: { resource: '/shared/origin.js' } },
          steps: [{ stepId: 's', httpStatusHandling: { '500': { resource: '/ledger/post-invoice.js' } } }],
        },
      ],
    };
    const { workflow } = await compileWorkflow(wf, opts);
    expect(JSON.stringify(workflow)).not.toContain('"resource"');
    expect((await compileWorkflow(wf, opts)).resources).toHaveLength(3);
  });

  it('checks every resource path before opening any file (S103)', async () => {
    const wf = oneStep({ processors: [{ resource: '/does/not/exist.js' }, { resource: '../etc/passwd' }] });
    await expect(compileWorkflow(wf, opts)).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_RESOURCE_PATH_INVALID',
    );
  });

  it('reports the first missing resource in document order with the directories searched', async () => {
    const wf = oneStep({
      processors: [
        { resource: '/general/clear-headers.js' },
        { resource: '/missing/a.js' },
        { resource: '/missing/b.js' },
      ],
    });
    await expect(compileWorkflow(wf, opts)).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_NOT_FOUND');
    await expect(compileWorkflow(wf, opts)).rejects.toThrow(
      `"/missing/a.js" was not found in any of: ${RESOURCE_DIRS.join(', ')}`,
    );
  });

  it('uses the packager directories by default', async () => {
    await expect(compileWorkflow(oneStep({ resource: '/definitely/not/here.js' }))).rejects.toThrow(
      'not found in any of: /community-resources, /local-resources1, /local-resources2',
    );
  });

  describe('limits', () => {
    const s = scratch({
      'r/small.js': 'x'.repeat(10),
      'r/latin1.js': new Uint8Array([0x61, 0xe9, 0x62]),
      'r/bom.js': '\ufeffok',
    });
    afterAll(s.cleanup);
    const dirs = [join(s.root, 'r')];

    it('rejects a resource over maxResourceBytes', async () => {
      await expect(
        compileWorkflow(oneStep({ resource: 'small.js' }), { resourceDirs: dirs, maxResourceBytes: 9 }),
      ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_TOO_LARGE');
    });

    it('counts every inlined copy against maxCompiledBytes', async () => {
      const wf = JSON.stringify(
        oneStep({ processors: Array.from({ length: 20 }, () => ({ resource: 'small.js' })) }),
      );
      const base = Buffer.byteLength(wf);
      await expect(
        compileWorkflow(wf, { resourceDirs: dirs, maxCompiledBytes: base + 199 }),
      ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_COMPILED_TOO_LARGE');
      expect(
        (await compileWorkflow(wf, { resourceDirs: dirs, maxCompiledBytes: base + 200 })).resources[0]
          ?.references,
      ).toBe(20);
    });

    it('rejects input over maxInputBytes as a syntax error', async () => {
      await expect(
        compileWorkflow(JSON.stringify(oneStep({ script: 'x' })), { maxInputBytes: 10 }),
      ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_JSON_TOO_LARGE');
    });

    it('rejects a resource that is not UTF-8 with WORKFLOW_RESOURCE_BAD_UTF8', async () => {
      await expect(
        compileWorkflow(oneStep({ resource: 'latin1.js' }), { resourceDirs: dirs }),
      ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_BAD_UTF8');
    });

    it('drops a UTF-8 byte order mark from a resource', async () => {
      const { workflow } = await compileWorkflow(oneStep({ resource: 'bom.js' }), { resourceDirs: dirs });
      expect(workflow.workflows[0]!.steps[0]!.resultsProcessor!.script).toBe('ok');
    });
  });
});
