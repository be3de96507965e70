import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowError, buildWorkflows, compileWorkflow, hashWorkflow } from '../src/index.js';
import { goldenText } from '../testdata/generate.js';
import { RESOURCE_DIRS, TESTDATA, WORKFLOW_DIRS, scratch } from './fixtures.js';

const opts = { workflowDirs: WORKFLOW_DIRS };
const manifest = (includes: unknown[]): string => JSON.stringify({ includes });
const custom = (op: string, sourcePath: string, sourceValue?: unknown) =>
  sourceValue === undefined ? { op, sourcePath } : { op, sourcePath, sourceValue };
const health = (customizations: unknown[] = []) => ({
  sourceWorkflow: 'health.workflow.json',
  customizations,
});

async function build(customizations: unknown[]) {
  return (await buildWorkflows(manifest([health(customizations)]), opts)).workflow;
}

describe('buildWorkflows', () => {
  it('builds the invoice suite to its golden file and hash', async () => {
    const built = await buildWorkflows(
      readFileSync(join(TESTDATA, 'manifests', 'invoice-suite.manifest.json')),
      opts,
    );
    expect(built.includes).toEqual([
      { sourceWorkflow: '/invoice-upload.workflow.json', dir: WORKFLOW_DIRS[0] },
      { sourceWorkflow: '/health.workflow.json', dir: WORKFLOW_DIRS[0] },
    ]);
    const { workflow } = await compileWorkflow(built.workflow, { resourceDirs: RESOURCE_DIRS });
    expect(goldenText(workflow)).toBe(
      readFileSync(join(TESTDATA, 'golden', 'invoice-suite.built.json'), 'utf8'),
    );
    const hashes = JSON.parse(readFileSync(join(TESTDATA, 'golden', 'hashes.json'), 'utf8')) as Record<
      string,
      string
    >;
    expect(hashWorkflow(workflow)).toBe(hashes['invoice-suite.manifest.json']);
    expect(workflow.workflows.map((w) => w.name)).toEqual(['invoice upload', 'health']);
  });

  it('value replaces an existing member or sets a new one under an existing parent', async () => {
    const wf = await build([
      custom('value', '$.workflows[0].steps[0].trigger.http.path', '/v2/health'),
      custom('value', '$.workflows[0].enabled', 'false'),
    ]);
    expect(wf.workflows[0]!.steps[0]!.trigger!.http!.path).toBe('/v2/health');
    expect(wf.workflows[0]!.enabled).toBe('false');
  });

  it('add appends to an array, inserts at an index, adds new members to an object', async () => {
    const step = { stepId: 'extra', resultsProcessor: { script: 'x' } };
    const wf = await build([
      custom('add', '$.workflows[0].steps', step),
      custom('add', '$.workflows[0].steps[0]', { ...step, stepId: 'first' }),
      custom('add', '$.workflows[0].data', { region: 'eu-1' }),
      custom('add', '$.workflows[0].data', { tier: 'gold' }),
    ]);
    expect(wf.workflows[0]!.steps.map((s) => s.stepId)).toEqual(['first', 'health', 'extra']);
    expect(wf.workflows[0]!.data).toEqual({ region: 'eu-1', tier: 'gold' });
  });

  it('delete removes a member or an array element', async () => {
    const wf = await build([
      custom('delete', '$.workflows[0].steps[0].trigger'),
      custom('add', '$.workflows', { name: 'x', steps: [{ stepId: 'y' }] }),
      custom('delete', '$.workflows[1]'),
    ]);
    expect(wf.workflows).toHaveLength(1);
    expect(wf.workflows[0]!.steps[0]!.trigger).toBeUndefined();
  });

  it('delete of an absent member is a no-op, applied again or first', async () => {
    const once = await build([custom('delete', '$.workflows[0].steps[0].trigger')]);
    const twice = await build([
      custom('delete', '$.workflows[0].data'),
      custom('delete', '$.workflows[0].steps[0].trigger'),
      custom('delete', '$.workflows[0].steps[0].trigger'),
    ]);
    expect(twice).toEqual(once);
    expect(twice.workflows[0]!.data).toBeUndefined();
  });

  it('names the missing or non-container parent in WORKFLOW_MANIFEST_PATH_NOT_FOUND', async () => {
    await expect(build([custom('delete', '$.workflows[0].data.region')])).rejects.toThrow(
      'the parent $.workflows[0].data does not exist',
    );
    await expect(build([custom('delete', '$.workflows[4].steps')])).rejects.toThrow(
      'the parent $.workflows[4] does not exist',
    );
    await expect(build([custom('value', '$.workflows[0].name.first.x', 'y')])).rejects.toThrow(
      'the parent $.workflows[0].name is not an object or array',
    );
  });

  it.each([
    [custom('value', '$.workflows[0].nothing.path', 1), 'WORKFLOW_MANIFEST_PATH_NOT_FOUND', 'missing parent'],
    [
      custom('value', '$.workflows[5].name', 'x'),
      'WORKFLOW_MANIFEST_PATH_NOT_FOUND',
      'index past the end in the middle',
    ],
    [custom('value', '$.workflows[1]', {}), 'WORKFLOW_MANIFEST_PATH_NOT_FOUND', 'value past the end'],
    [custom('add', '$.workflows[2]', {}), 'WORKFLOW_MANIFEST_PATH_NOT_FOUND', 'add beyond length'],
    [
      custom('delete', '$.workflows[0].data.region'),
      'WORKFLOW_MANIFEST_PATH_NOT_FOUND',
      'delete under missing parent',
    ],
    [custom('delete', '$.workflows[3]'), 'WORKFLOW_MANIFEST_PATH_NOT_FOUND', 'delete missing element'],
    [custom('value', '$.workflows.name', 'x'), 'WORKFLOW_MANIFEST_PATH_NOT_FOUND', 'name on an array'],
    [custom('value', '$.workflows[0][0]', 'x'), 'WORKFLOW_MANIFEST_PATH_NOT_FOUND', 'index on an object'],
    [custom('add', '$.workflows[0].name', 'x'), 'WORKFLOW_MANIFEST_OP_INVALID', 'add onto a scalar'],
    [
      custom('add', '$.workflows[0].steps[0].trigger', { http: {} }),
      'WORKFLOW_MANIFEST_OP_INVALID',
      'add clashing member',
    ],
    [custom('value', '$.workflows[0].name'), 'WORKFLOW_MANIFEST_OP_INVALID', 'value without sourceValue'],
    [custom('delete', '$.workflows[0].name', 'x'), 'WORKFLOW_MANIFEST_OP_INVALID', 'delete with sourceValue'],
    [custom('value', '$', {}), 'WORKFLOW_MANIFEST_OP_INVALID', 'root target'],
    [custom('replace', '$.workflows[0].name', 'x'), 'WORKFLOW_MANIFEST_OP_UNKNOWN', 'unknown op'],
    [custom('VALUE', '$.workflows[0].name', 'x'), 'WORKFLOW_MANIFEST_OP_UNKNOWN', 'op in capitals'],
    [custom('value', 'workflows[0].name', 'x'), 'WORKFLOW_MANIFEST_PATH_INVALID', 'no $'],
    [custom('value', '$..name', 'x'), 'WORKFLOW_MANIFEST_PATH_INVALID', 'recursive descent'],
    [custom('value', '$.workflows[0].name', 7), 'WORKFLOW_SCHEMA_INVALID', 'result breaks the schema'],
  ])('rejects %j with %s (%s)', async (c, code) => {
    await expect(build([c])).rejects.toThrowCode(WorkflowError, code);
  });

  it('names the include and op index in the error', async () => {
    const m = manifest([
      health(),
      {
        sourceWorkflow: 'timer-report.workflow.json',
        customizations: [custom('value', '$.x.y', 1), custom('bogus', '$.a', 1)],
      },
    ]);
    await expect(buildWorkflows(m, opts)).rejects.toThrow('includes[1].customizations[1]');
    await expect(buildWorkflows(m, opts)).rejects.toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_OP_UNKNOWN');
  });

  it('rejects the same stepId from two includes with WORKFLOW_DUPLICATE_STEP_ID', async () => {
    const m = manifest([
      health(),
      {
        sourceWorkflow: 'timer-report.workflow.json',
        customizations: [custom('value', '$.workflows[0].steps[0].stepId', 'health')],
      },
    ]);
    await expect(buildWorkflows(m, opts)).rejects.toThrowCode(WorkflowError, 'WORKFLOW_DUPLICATE_STEP_ID');
  });

  it('rejects different top-level data from two includes with WORKFLOW_MANIFEST_CONFLICT', async () => {
    const m = manifest([
      { sourceWorkflow: 'invoice-upload.workflow.json' },
      health([custom('add', '$.data', { currency: 'USD' })]),
    ]);
    await expect(buildWorkflows(m, opts)).rejects.toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_CONFLICT');
  });

  it.each([
    [['health.workflow.json', 'health.workflow.json'], 'the same name'],
    [['health.workflow.json', '/health.workflow.json'], 'with and without a leading slash'],
    [['health.workflow.json', 'Health.Workflow.JSON'], 'case folding'],
    [['caf\u00e9.json', 'cafe\u0301.json'], 'NFC vs NFD'],
  ])('rejects including %j (%s) with WORKFLOW_MANIFEST_DUPLICATE_INCLUDE (S105)', async (names) => {
    await expect(
      buildWorkflows(manifest(names.map((n) => ({ sourceWorkflow: n }))), opts),
    ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_DUPLICATE_INCLUDE');
  });

  describe('include files', () => {
    const s = scratch({
      'w/a.json': readFileSync(join(WORKFLOW_DIRS[0]!, 'health.workflow.json'), 'utf8'),
      'outside.json': '{}',
      'w/bad.json': '{"a":1,"a":2}',
    });
    symlinkSync(join(s.root, 'w/a.json'), join(s.root, 'w/alias.json'));
    symlinkSync(join(s.root, 'outside.json'), join(s.root, 'w/escape.json'));
    afterAll(s.cleanup);
    const dirs = { workflowDirs: [join(s.root, 'w')] };

    it('rejects two names for one real file with WORKFLOW_MANIFEST_DUPLICATE_INCLUDE', async () => {
      await expect(
        buildWorkflows(manifest([{ sourceWorkflow: 'a.json' }, { sourceWorkflow: 'alias.json' }]), dirs),
      ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_DUPLICATE_INCLUDE');
    });

    it.each([
      ['../outside.json', 'WORKFLOW_RESOURCE_PATH_INVALID'],
      ['C:\\w\\a.json', 'WORKFLOW_RESOURCE_PATH_INVALID'],
      ['escape.json', 'WORKFLOW_RESOURCE_OUTSIDE_ROOT'],
      ['missing.json', 'WORKFLOW_RESOURCE_NOT_FOUND'],
      ['bad.json', 'WORKFLOW_JSON_DUPLICATE_KEY'],
    ])('reads %j through the safe resolver (%s, S103/S104)', async (name, code) => {
      await expect(buildWorkflows(manifest([{ sourceWorkflow: name }]), dirs)).rejects.toThrowCode(
        WorkflowError,
        code,
      );
    });
  });

  it('rejects more includes than the cap in bounded time (S107)', async () => {
    const many = manifest(Array.from({ length: 10_000 }, (_, i) => ({ sourceWorkflow: `w${i}.json` })));
    const t0 = performance.now();
    await expect(buildWorkflows(many, opts)).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_MANIFEST_TOO_MANY_INCLUDES',
    );
    expect(performance.now() - t0).toBeLessThan(2000);
    await expect(
      buildWorkflows(manifest([health(), health()]), { ...opts, maxIncludes: 1 }),
    ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_TOO_MANY_INCLUDES');
  });

  it('rejects too many customisations and malformed manifests', async () => {
    await expect(
      buildWorkflows(
        manifest([
          health([custom('value', '$.workflows[0].name', 'a'), custom('value', '$.workflows[0].name', 'b')]),
        ]),
        { ...opts, maxCustomizations: 1 },
      ),
    ).rejects.toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_INVALID');
    for (const bad of [
      '{}',
      '{"includes":[]}',
      '{"includes":[{"sourceWorkflow":"a","extra":1}]}',
      '{"includes":[{"sourceWorkflow":"a","customizations":[{"op":"value"}]}]}',
    ]) {
      await expect(buildWorkflows(bad, opts)).rejects.toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_INVALID');
    }
    await expect(buildWorkflows('{"includes":[', opts)).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_INVALID',
    );
  });

  it('writes __proto__ and constructor as own data members, never into a prototype (S4)', async () => {
    const wf = await build([
      custom('add', '$.workflows[0].data', { x: 1 }),
      custom('add', "$.workflows[0].data['__proto__']", { polluted: true }),
      custom('value', "$.workflows[0].data['constructor']", { prototype: { polluted: true } }),
    ]);
    expect(Object.keys(wf.workflows[0]!.data!)).toEqual(['x', '__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    await expect(build([custom('value', "$.workflows[0]['__proto__']", {})])).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_SCHEMA_INVALID',
    );
  });

  it('copies sourceValue, so one value used twice is not shared', async () => {
    const wf = await build([
      custom('add', '$.workflows[0].data', { list: [] }),
      custom('add', '$.workflows[0].steps[0].data', { list: [] }),
      custom('add', '$.workflows[0].data.list', 1),
    ]);
    expect(wf.workflows[0]!.steps[0]!.data).toEqual({ list: [] });
  });
});
