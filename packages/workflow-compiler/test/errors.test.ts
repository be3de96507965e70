import { describe, expect, it } from 'vitest';
import {
  WORKFLOW_ERROR_CODES,
  WORKFLOW_SYNTAX_ERROR_CODES,
  WorkflowError,
  isSyntaxErrorCode,
  isWorkflowError,
  parseStrictJson,
  substituteVariables,
  validateBootstrap,
  validateWorkflow,
} from '../src/index.js';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';

describe('WorkflowError', () => {
  it('carries a code, a name equal to the class name, cause and details', () => {
    const cause = new Error('inner');
    const e = new WorkflowError('WORKFLOW_SCHEMA_INVALID', 'workflow is invalid', {
      cause,
      details: { errors: [{ pointer: '/workflows', detail: 'missing required property' }] },
    });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('WorkflowError');
    expect(e.name).toBe(WorkflowError.name);
    expect(e.code).toBe('WORKFLOW_SCHEMA_INVALID');
    expect(e.cause).toBe(cause);
    expect(e.details).toEqual({ errors: [{ pointer: '/workflows', detail: 'missing required property' }] });
    expect(() => {
      throw e;
    }).toThrowCode(WorkflowError, 'WORKFLOW_SCHEMA_INVALID');
  });

  it('leaves details undefined when none are given', () => {
    expect(new WorkflowError('WORKFLOW_JSON_INVALID', 'm').details).toBeUndefined();
  });
});

describe('WORKFLOW_ERROR_CODES', () => {
  it('are unique, UPPER_SNAKE and prefixed WORKFLOW_', () => {
    expect(new Set(WORKFLOW_ERROR_CODES).size).toBe(WORKFLOW_ERROR_CODES.length);
    for (const code of WORKFLOW_ERROR_CODES) expect(code).toMatch(/^WORKFLOW_[A-Z0-9_]+$/);
  });

  it('splits into syntax codes (JSON text) and semantic codes', () => {
    for (const code of WORKFLOW_SYNTAX_ERROR_CODES) expect(WORKFLOW_ERROR_CODES).toContain(code);
    expect(WORKFLOW_SYNTAX_ERROR_CODES.every((c) => c.startsWith('WORKFLOW_JSON_'))).toBe(true);
    expect(isSyntaxErrorCode('WORKFLOW_JSON_DUPLICATE_KEY')).toBe(true);
    expect(isSyntaxErrorCode('WORKFLOW_SCHEMA_INVALID')).toBe(false);
    expect(isSyntaxErrorCode('WORKFLOW_RESOURCE_NOT_FOUND')).toBe(false);
    expect(isSyntaxErrorCode('nonsense')).toBe(false);
  });
});

describe('isWorkflowError (code-list membership)', () => {
  it('accepts every code of the frozen WORKFLOW_ERROR_CODES, also from another loaded copy', () => {
    expect(Object.isFrozen(WORKFLOW_ERROR_CODES)).toBe(true);
    for (const code of WORKFLOW_ERROR_CODES) expect(isWorkflowError(new WorkflowError(code, 'm'))).toBe(true);
    expect(isWorkflowError({ name: 'WorkflowError', code: WORKFLOW_ERROR_CODES[0], message: 'm' })).toBe(
      true,
    );
  });
  it('refuses an unknown code with the right prefix, another class name and non-objects', () => {
    const prefix = WORKFLOW_ERROR_CODES[0].split('_')[0]!;
    expect(isWorkflowError({ name: 'WorkflowError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isWorkflowError({ name: 'Error', code: WORKFLOW_ERROR_CODES[0] })).toBe(false);
    expect(isWorkflowError(null)).toBe(false);
    expect(isWorkflowError(WORKFLOW_ERROR_CODES[0])).toBe(false);
  });
});

describe('WorkflowError details (one shape across packages)', () => {
  it('are a plain object, never an array; failed fields are details.errors', () => {
    const errors = [
      thrownBy(() => validateWorkflow({ workflows: 'x', extra: 1 })),
      thrownBy(() => validateBootstrap([{ deploymentId: 1 }])),
      thrownBy(() => parseStrictJson('{"a":}')),
      thrownBy(() => substituteVariables({ a: '${MISSING}' }, new Map())),
    ];
    for (const err of errors) {
      expect(isWorkflowError(err)).toBe(true);
      const details = (err as WorkflowError).details;
      expect(detailsShapeProblem(err)).toBeUndefined();
      expect(details?.errors?.length).toBeGreaterThan(0);
    }
  });
});
