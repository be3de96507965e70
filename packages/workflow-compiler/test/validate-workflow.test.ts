import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkflowError, validateWorkflow, type WorkflowErrorDetail } from '../src/index.js';
import { TESTDATA, oneStep } from './fixtures.js';

function details(fn: () => unknown): WorkflowErrorDetail[] {
  try {
    fn();
  } catch (e) {
    return [...((e as WorkflowError).details?.errors ?? [])];
  }
  throw new Error('did not throw');
}

describe('validateWorkflow', () => {
  it.each(['invoice-upload', 'timer-report', 'health'])('accepts the %s fixture', (name) => {
    const bytes = readFileSync(join(TESTDATA, 'workflows', `${name}.workflow.json`));
    expect(validateWorkflow(bytes).workflows.length).toBe(1);
  });

  it('accepts the docs/interfaces.md §4.7 example shape: http trigger with multiPartUploadByteLimit', () => {
    const wf = oneStep(
      { script: 'x' },
      { trigger: { http: { server: 'api', path: '/x', multiPartUploadByteLimit: 5242880 } } },
    );
    expect(validateWorkflow(wf).workflows[0]?.steps[0]?.trigger?.http?.multiPartUploadByteLimit).toBe(
      5242880,
    );
  });

  it('accepts httpStatusHandling keys that are a status or an inclusive range, and nothing else', () => {
    const wf = (key: string) => oneStep({ script: 'x' }, { httpStatusHandling: { [key]: { script: 'y' } } });
    for (const key of ['404', '300-599']) expect(() => validateWorkflow(wf(key))).not.toThrow();
    for (const key of ['4xx', '300-', '300-5990', ' 404', '600'])
      expect(() => validateWorkflow(wf(key))).toThrowCode(WorkflowError, 'WORKFLOW_SCHEMA_INVALID');
  });

  it('reports every schema violation at once with pointers, expected and found', () => {
    const wf = {
      workflows: [
        { name: 7, steps: [{ stepId: 's', unknownField: 1, trigger: { http: { server: 'api' } } }] },
      ],
      extra: true,
    };
    expect(() => validateWorkflow(wf)).toThrowCode(WorkflowError, 'WORKFLOW_SCHEMA_INVALID');
    expect(details(() => validateWorkflow(wf))).toEqual(
      expect.arrayContaining([
        { pointer: '/extra', detail: 'unknown property "extra"' },
        { pointer: '/workflows/0/name', detail: 'expected string, found number' },
        { pointer: '/workflows/0/steps/0/unknownField', detail: 'unknown property "unknownField"' },
        { pointer: '/workflows/0/steps/0/trigger/http/path', detail: 'missing required property' },
      ]),
    );
  });

  it.each([
    [{ trigger: { http: { server: 'a', path: '/', multiPartUploadByteLimit: 0 } } }, 'limit 0'],
    [{ trigger: { http: { server: 'a', path: '/', multiPartUploadByteLimit: -1 } } }, 'limit -1'],
    [{ trigger: { http: { server: 'a', path: '/', multiPartUploadByteLimit: 1.5 } } }, 'limit 1.5'],
    [{ trigger: { http: { server: 'a', path: '/', multiPartUploadByteLimit: '5' } } }, 'limit as string'],
    [{ trigger: { type: 'http' } }, 'docs-page trigger form'],
    [{ trigger: { timer: { delay: 5 } } }, 'timer without period'],
    [{ trigger: { tcp: { server: 't', fixedLength: 4, delimiter: '\n' } } }, 'tcp with both framings'],
    [{ enabled: 'yes' }, 'bad stringBoolean'],
    [{ type: 'javascript' }, 'unknown step type'],
    [{ singleThreaded: 'always' }, 'unknown singleThreaded'],
    [{ persistence: { persistenceFile: 'p', hexSymmetricKey: 'not-hex' } }, 'bad hexSymmetricKey'],
    [{ httpStatusHandling: { abc: { script: 'x' } } }, 'non-status key'],
    [{ comment: 5 }, 'comment not a string'],
  ])('rejects %j (%s) with WORKFLOW_SCHEMA_INVALID', (extra, _label) => {
    expect(() => validateWorkflow(oneStep({ script: 'x' }, extra))).toThrowCode(
      WorkflowError,
      'WORKFLOW_SCHEMA_INVALID',
    );
  });

  it.each([
    [{}, 'no form'],
    [{ script: null }, 'script null alone'],
    [{ script: 'x', resource: '/a.js' }, 'script and resource'],
    [{ resource: '/a.js', processors: [{ script: 'x' }] }, 'resource and chain'],
    [{ processors: [] }, 'empty chain'],
    [{ processors: [{ processors: [{}] }] }, 'nested empty processor'],
    [{ resource: '/a.js', resourceName: '/a.js' }, 'resourceName without script'],
  ])('rejects the processor %j (%s) with WORKFLOW_SCHEMA_INVALID', (processor, _label) => {
    expect(() => validateWorkflow(oneStep(processor))).toThrowCode(WorkflowError, 'WORKFLOW_SCHEMA_INVALID');
  });

  it('accepts script null beside a resource, and a compiled processor with resourceName', () => {
    expect(validateWorkflow(oneStep({ script: null, resource: '/a.js' }))).toBeDefined();
    expect(validateWorkflow(oneStep({ script: 'x', resourceName: '/a.js' }))).toBeDefined();
  });

  it('rejects a stepId used twice in one workflow with WORKFLOW_DUPLICATE_STEP_ID', () => {
    const wf = {
      workflows: [
        { name: 'a', steps: [{ stepId: 'y' }] },
        { name: 'b', steps: [{ stepId: 'x' }, { stepId: 'y' }, { stepId: 'x' }] },
      ],
    };
    expect(() => validateWorkflow(wf)).toThrowCode(WorkflowError, 'WORKFLOW_DUPLICATE_STEP_ID');
    expect(details(() => validateWorkflow(wf))).toEqual([
      {
        pointer: '/workflows/1/steps/2/stepId',
        detail: 'stepId repeats the one at /workflows/1/steps/0/stepId',
      },
    ]);
  });

  it('accepts the same stepId in two workflows of one file (ADR 0060)', () => {
    const wf = {
      workflows: [
        { name: 'a', steps: [{ stepId: 'x' }] },
        { name: 'b', steps: [{ stepId: 'x' }] },
      ],
    };
    expect(validateWorkflow(wf).workflows).toHaveLength(2);
  });

  it('treats "resource": "" as absent: beside a script it is accepted, alone it is no processor form', () => {
    expect(validateWorkflow(oneStep({ script: 'x', resource: '' }))).toBeDefined();
    expect(validateWorkflow(oneStep({ processors: [{ script: 'x' }], resource: '' }))).toBeDefined();
    expect(() => validateWorkflow(oneStep({ resource: '' }))).toThrowCode(
      WorkflowError,
      'WORKFLOW_SCHEMA_INVALID',
    );
    expect(() => validateWorkflow(oneStep({ script: 'x', resource: '/a.js' }))).toThrowCode(
      WorkflowError,
      'WORKFLOW_SCHEMA_INVALID',
    );
  });

  it('never echoes a secret value in the message or details', () => {
    const secret = 'ZZ' + 'ab'.repeat(31);
    const wf = oneStep({ script: 'x' }, { persistence: { persistenceFile: 'p', hexSymmetricKey: secret } });
    try {
      validateWorkflow(JSON.stringify(wf));
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toContain(secret);
      expect(JSON.stringify((e as WorkflowError).details)).not.toContain(secret);
      expect((e as Error).message).toContain('string of length 64');
    }
  });

  it('caps details at 100 and counts the rest', () => {
    const wf = {
      workflows: [{ name: 'w', steps: Array.from({ length: 150 }, (_, i) => ({ stepId: `s${i}`, bad: 1 })) }],
    };
    const d = details(() => validateWorkflow(wf));
    expect(d).toHaveLength(101);
    expect(d[100]).toEqual({ pointer: '', detail: '50 more errors not shown' });
  });

  it('passes syntax errors through with their own codes', () => {
    expect(() => validateWorkflow('{"workflows":[],"workflows":[]}')).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_DUPLICATE_KEY',
    );
    expect(() => validateWorkflow('{"workflows":')).toThrowCode(WorkflowError, 'WORKFLOW_JSON_INVALID');
  });

  it('rejects a non-JSON value with WORKFLOW_VALUE_INVALID', () => {
    expect(() => validateWorkflow(oneStep({ script: 'x' }, { data: { n: NaN } }))).toThrowCode(
      WorkflowError,
      'WORKFLOW_VALUE_INVALID',
    );
  });

  it('keeps __proto__ inside data as plain data (S4)', () => {
    const wf = validateWorkflow(
      '{"workflows":[{"name":"w","steps":[{"stepId":"s","data":{"__proto__":{"polluted":true}}}]}]}',
    );
    const data = wf.workflows[0]?.steps[0]?.data as Record<string, unknown>;
    expect(Object.keys(data)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('rejects __proto__ as a structural key with WORKFLOW_SCHEMA_INVALID', () => {
    expect(() =>
      validateWorkflow('{"__proto__":{},"workflows":[{"name":"w","steps":[{"stepId":"s"}]}]}'),
    ).toThrowCode(WorkflowError, 'WORKFLOW_SCHEMA_INVALID');
  });
});
