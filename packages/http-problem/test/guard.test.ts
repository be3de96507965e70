import { describe, expect, it } from 'vitest';
import {
  codedErrorGuard,
  codedProblem,
  instanceOf,
  problemTitle,
  problemType,
  requestIdOfInstance,
} from '../src/index.js';

describe('codedErrorGuard', () => {
  const isCoded = codedErrorGuard(['UploadError', 'AgentError'], {
    UPLOAD_ABORTED: 400,
    AGENT_STEP_FAILED: 500,
  });
  it('accepts a known name with a code of the table', () => {
    expect(isCoded({ name: 'UploadError', code: 'UPLOAD_ABORTED', message: 'm' })).toBe(true);
    expect(isCoded(Object.assign(new Error('m'), { name: 'AgentError', code: 'AGENT_STEP_FAILED' }))).toBe(
      true,
    );
  });
  it('refuses an unknown name, a code outside the table, a prototype key, a missing message and non-objects', () => {
    expect(isCoded({ name: 'Error', code: 'UPLOAD_ABORTED', message: 'm' })).toBe(false);
    expect(isCoded({ name: 'UploadError', code: 'UPLOAD_NOPE', message: 'm' })).toBe(false);
    expect(isCoded({ name: 'UploadError', code: 'toString', message: 'm' })).toBe(false);
    expect(isCoded({ name: 'UploadError', code: 'UPLOAD_ABORTED' })).toBe(false);
    expect(isCoded(null)).toBe(false);
    expect(isCoded('UPLOAD_ABORTED')).toBe(false);
  });
});

describe('codedProblem', () => {
  it('derives type and title from the code and keeps errors and extensions, standard members winning', () => {
    const p = codedProblem('REQUEST_FIELD_INVALID', 422, 'body field /a is required', 'id', {
      errors: [{ pointer: '/a', detail: 'is required' }],
      extensions: { ok: false, status: 200 },
    });
    expect(p).toEqual({
      ok: false,
      type: 'urn:example:oapp:problem:request-field-invalid',
      title: 'Field invalid',
      status: 422,
      detail: 'body field /a is required',
      instance: 'urn:example:oapp:request:id',
      code: 'REQUEST_FIELD_INVALID',
      errors: [{ pointer: '/a', detail: 'is required' }],
    });
    expect(problemType('AGENT_ROUTE_NOT_FOUND')).toBe('urn:example:oapp:problem:agent-route-not-found');
    expect(problemTitle('AGENT_ROUTE_NOT_FOUND')).toBe('Route not found');
  });
});

describe('instanceOf', () => {
  it('names a UUID request id as urn:uuid and any other kept id in the examples namespace, both ways', () => {
    const uuid = '123e4567-e89b-42d3-a456-426614174000';
    expect(instanceOf(uuid)).toBe(`urn:uuid:${uuid}`);
    expect(instanceOf('trace-7:a.b_c')).toBe('urn:example:oapp:request:trace-7:a.b_c');
    expect(requestIdOfInstance(instanceOf(uuid))).toBe(uuid);
    expect(requestIdOfInstance(instanceOf('trace-7:a.b_c'))).toBe('trace-7:a.b_c');
    expect(requestIdOfInstance('about:blank')).toBeUndefined();
  });
});
