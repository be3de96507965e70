import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  WorkflowError,
  canonicalize,
  compileWorkflow,
  hashWorkflow,
  readPackagedWorkflow,
} from '../src/index.js';
import { RESOURCE_DIRS, TESTDATA } from './fixtures.js';

const te = new TextEncoder();
const source = (name: string) => readFileSync(join(TESTDATA, 'workflows', name));
const compiled = async (name: string) =>
  (await compileWorkflow(source(name), { resourceDirs: RESOURCE_DIRS })).workflow;

describe('readPackagedWorkflow', () => {
  it.each(['health.workflow.json', 'invoice-upload.workflow.json', 'timer-report.workflow.json'])(
    'accepts the JCS bytes of compiled %s; their SHA-256 is the workflow hash',
    async (name) => {
      const wf = await compiled(name);
      const bytes = te.encode(canonicalize(wf));
      expect(readPackagedWorkflow(bytes)).toEqual(wf);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(hashWorkflow(wf));
    },
  );

  it('refuses an uncompiled workflow (a resource reference) with WORKFLOW_NOT_COMPILED', () => {
    const wf = {
      workflows: [{ name: 'w', steps: [{ stepId: 's', resultsProcessor: { resource: 'a.js' } }] }],
    };
    expect(() => readPackagedWorkflow(te.encode(canonicalize(wf)))).toThrowCode(
      WorkflowError,
      'WORKFLOW_NOT_COMPILED',
    );
  });

  it('refuses an uncompiled workflow (a structural comment) with WORKFLOW_NOT_COMPILED', () => {
    const wf = { comment: 'x', workflows: [{ name: 'w', steps: [{ stepId: 's' }] }] };
    expect(() => readPackagedWorkflow(te.encode(canonicalize(wf)))).toThrowCode(
      WorkflowError,
      'WORKFLOW_NOT_COMPILED',
    );
  });

  it('refuses an uncompiled source file with WORKFLOW_NOT_COMPILED', () => {
    expect(() => readPackagedWorkflow(source('invoice-upload.workflow.json'))).toThrowCode(
      WorkflowError,
      'WORKFLOW_NOT_COMPILED',
    );
  });

  it('refuses non-canonical JSON of a compiled workflow with WORKFLOW_NOT_CANONICAL', async () => {
    const wf = await compiled('health.workflow.json');
    const jcs = canonicalize(wf);
    const forms = [
      JSON.stringify(wf, null, 2), // whitespace
      JSON.stringify(wf), // source member order
      `${jcs}\n`, // a final newline
      jcs.replace('"workflows"', '"\\u0077orkflows"'), // an escape JCS does not use
    ];
    for (const text of forms) {
      expect(text).not.toBe(jcs);
      expect(() => readPackagedWorkflow(te.encode(text))).toThrowCode(
        WorkflowError,
        'WORKFLOW_NOT_CANONICAL',
      );
    }
  });

  it('refuses content that is not a workflow with the parse or schema code', () => {
    expect(() => readPackagedWorkflow(te.encode('{}'))).toThrowCode(WorkflowError, 'WORKFLOW_SCHEMA_INVALID');
    expect(() => readPackagedWorkflow(te.encode('not json'))).toThrowCode(
      WorkflowError,
      'WORKFLOW_JSON_INVALID',
    );
  });
});
