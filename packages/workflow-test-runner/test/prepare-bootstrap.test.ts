import { describe, expect, it } from 'vitest';
import { mergeTestBootstrap, TestRunnerError } from '../src/index.js';

const base = {
  file: 'b.json',
  deploymentId: 'test-x',
  remoteConfiguration: 'test:x',
  data: undefined,
  variables: {},
};

describe('mergeTestBootstrap', () => {
  it('completes an absent bootstrap into one valid record', () => {
    expect(mergeTestBootstrap({ ...base, partial: undefined })).toEqual({
      deploymentId: 'test-x',
      remoteConfiguration: 'test:x',
    });
  });

  it('converts the legacy hosts map into allowExternalHostAccess (docs/interfaces.md §3.6)', () => {
    const r = mergeTestBootstrap({
      ...base,
      partial: {
        hosts: {
          crm: {
            host: 'http://mockserver',
            authenticationHost: true,
            allowlist: [['GET', '/api/count']],
            data: { authorization: 'Basic eA==' },
          },
        },
      },
    });
    expect(r.allowExternalHostAccess).toEqual([
      {
        id: 'crm',
        host: 'http://mockserver',
        authenticationHost: true,
        allowList: [{ method: 'GET', uriPattern: '/api/count' }],
        data: { authorization: 'Basic eA==' },
      },
    ]);
    expect(r['hosts']).toBeUndefined();
  });

  it('keeps a deployment id from the partial and always sets remoteConfiguration itself', () => {
    const r = mergeTestBootstrap({
      ...base,
      partial: [{ deploymentId: 'mine', remoteConfiguration: '/etc/other.oapp' }],
    });
    expect(r).toMatchObject({ deploymentId: 'mine', remoteConfiguration: 'test:x' });
  });

  it('deep-merges the test data over the bootstrap data (test wins, arrays replaced)', () => {
    const r = mergeTestBootstrap({
      ...base,
      partial: { data: { region: 'eu', nested: { a: 1, b: [1, 2] }, keep: true } },
      data: { region: 'us', nested: { b: [3] }, extra: 'x' },
    });
    expect(r.data).toEqual({ region: 'us', nested: { a: 1, b: [3] }, keep: true, extra: 'x' });
  });

  it('substitutes ${NAME} in string values from variables and testDeploymentId, once, as the agent does', () => {
    const r = mergeTestBootstrap({
      ...base,
      partial: {
        allowDeploymentAccess: [{ id: 'peers', access: 'call', deploymentIds: ['${testDeploymentId}'] }],
        allowHttpServerAccess: [{ id: 'web', port: '${PORT}' }],
        data: { token: 'Bearer ${TOKEN}', loop: '${LOOP}', literal: '$${NOPE}', '${TOKEN}': 'keys stay' },
      },
      variables: { TOKEN: 'abc', LOOP: '${TOKEN}', PORT: '8080' },
      environment: { TOKEN: 'from-env', HOME: '/root', 'NOT-A-NAME': 'x' },
    });
    expect(r.allowDeploymentAccess).toEqual([{ id: 'peers', access: 'call', deploymentIds: ['test-x'] }]);
    expect(r.allowHttpServerAccess).toEqual([{ id: 'web', port: 8080 }]);
    expect(r.data).toEqual({
      token: 'Bearer abc',
      loop: '${TOKEN}',
      literal: '${NOPE}',
      '${TOKEN}': 'keys stay',
    });
  });

  it('issue 28: a name set nowhere, or one of the agent key variables, is TESTRUNNER_BOOTSTRAP_INVALID', () => {
    const fails = (data: Record<string, string>, variables: Record<string, string> = {}) => {
      try {
        mergeTestBootstrap({
          ...base,
          partial: { data },
          variables,
          environment: { AGENT_STRING_SECRETKEYS: 'k' },
        });
      } catch (e) {
        return e;
      }
      return undefined;
    };
    expect(fails({ unknown: '${NOPE}' })).toMatchObject({
      code: 'TESTRUNNER_BOOTSTRAP_INVALID',
      details: { workflowCode: 'WORKFLOW_VARIABLE_MISSING' },
    });
    expect(fails({ keys: '${AGENT_STRING_SECRETKEYS}' })).toMatchObject({
      code: 'TESTRUNNER_BOOTSTRAP_INVALID',
      details: { workflowCode: 'WORKFLOW_VARIABLE_INVALID' },
    });
    expect(fails({ dotted: '${a.b}' }, { 'a.b': 'x' })).toMatchObject({
      details: { workflowCode: 'WORKFLOW_VARIABLE_INVALID' },
    });
  });

  it('rejects several records, a non-object and a schema violation with TESTRUNNER_BOOTSTRAP_INVALID', () => {
    expect(() => mergeTestBootstrap({ ...base, partial: [{}, {}] })).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_BOOTSTRAP_INVALID',
    );
    expect(() => mergeTestBootstrap({ ...base, partial: 'text' })).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_BOOTSTRAP_INVALID',
    );
    let err: unknown;
    try {
      mergeTestBootstrap({ ...base, partial: { allowHttpServerAccess: [{ id: 'web', port: 70000 }] } });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({
      code: 'TESTRUNNER_BOOTSTRAP_INVALID',
      details: {
        workflowCode: 'WORKFLOW_BOOTSTRAP_INVALID',
        errors: expect.arrayContaining([
          expect.objectContaining({ pointer: '/0/allowHttpServerAccess/0/port' }),
        ]),
      },
    });
  });

  it('keeps __proto__ keys as plain data', () => {
    const partial = JSON.parse('{"data":{"__proto__":{"polluted":"yes"}}}') as Record<string, unknown>;
    const r = mergeTestBootstrap({ ...base, partial: partial as never });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(r.data ?? {})).toEqual(['__proto__']);
  });
});
