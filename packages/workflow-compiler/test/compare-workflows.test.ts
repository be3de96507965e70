import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkflowError, buildWorkflows, compareWorkflows, compileWorkflow } from '../src/index.js';
import { RESOURCE_DIRS, TESTDATA, WORKFLOW_DIRS, oneStep } from './fixtures.js';

describe('compareWorkflows', () => {
  it('returns an empty list for equal workflows, whatever the member order', () => {
    expect(compareWorkflows({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toEqual([]);
  });

  it('lists add, remove and replace with pointers', () => {
    const a = { keep: 1, gone: 'x', changed: { n: 1 }, list: [1, 2, 3], type: [1] };
    const b = { keep: 1, added: true, changed: { n: 2 }, list: [1, 9], type: { 0: 1 } };
    expect(compareWorkflows(a, b)).toEqual([
      { op: 'add', pointer: '/added', to: true },
      { op: 'replace', pointer: '/changed/n', from: 1, to: 2 },
      { op: 'remove', pointer: '/gone', from: 'x' },
      { op: 'replace', pointer: '/list/1', from: 2, to: 9 },
      { op: 'remove', pointer: '/list/2', from: 3 },
      { op: 'replace', pointer: '/type', from: [1], to: { 0: 1 } },
    ]);
  });

  it('escapes ~ and / in pointers (RFC 6901)', () => {
    expect(compareWorkflows({ 'a/b~c': 1 }, { 'a/b~c': 2 })).toEqual([
      { op: 'replace', pointer: '/a~1b~0c', from: 1, to: 2 },
    ]);
  });

  it('shows what a manifest changed, after compile', async () => {
    const source = readFileSync(join(TESTDATA, 'workflows', 'invoice-upload.workflow.json'));
    const built = await buildWorkflows(
      readFileSync(join(TESTDATA, 'manifests', 'invoice-suite.manifest.json')),
      { workflowDirs: WORKFLOW_DIRS },
    );
    const a = (await compileWorkflow(source, { resourceDirs: RESOURCE_DIRS })).workflow;
    const b = (await compileWorkflow(built.workflow, { resourceDirs: RESOURCE_DIRS })).workflow;
    const pointers = compareWorkflows(a, b).map((d) => `${d.op} ${d.pointer}`);
    expect(pointers).toContain('replace /data/currency');
    expect(pointers).toContain('add /workflows/0/data/tenant');
    expect(pointers).toContain('replace /workflows/0/steps/0/trigger/http/path');
    expect(pointers).toContain('remove /workflows/0/steps/1/payloadGenerator');
    expect(pointers).toContain('add /workflows/1');
  });

  it('ignores comments and resource references once both sides are compiled', async () => {
    const a = (
      await compileWorkflow(oneStep({ resource: '/shared/origin.js', comment: 'x' }), {
        resourceDirs: RESOURCE_DIRS,
      })
    ).workflow;
    const script = readFileSync(join(RESOURCE_DIRS[0]!, 'shared/origin.js'), 'utf8');
    const b = (
      await compileWorkflow(oneStep({ script, resourceName: '/shared/origin.js' }), { resourceDirs: [] })
    ).workflow;
    expect(compareWorkflows(a, b)).toEqual([]);
  });

  it('rejects a non-JSON input with WORKFLOW_VALUE_INVALID', () => {
    expect(() => compareWorkflows({ a: undefined }, {})).toThrowCode(WorkflowError, 'WORKFLOW_VALUE_INVALID');
  });
});
