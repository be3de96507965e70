import { describe, expect, it } from 'vitest';
import { parseTestFile, TestRunnerError } from '../src/index.js';
import { json } from './fixtures.js';

const minimal = { fromDirectory: '/a/', testThisStep: 's', useThisTestConfigFile: 'a.workflow.json' };

function errorOf(fn: () => unknown): TestRunnerError {
  try {
    fn();
  } catch (err) {
    return err as TestRunnerError;
  }
  throw new Error('did not throw');
}

describe('parseTestFile', () => {
  it('reads every field of docs/interfaces.md §7.3 and applies the defaults', () => {
    const spec = parseTestFile(
      json({
        ...minimal,
        comment: ['a', 'b'],
        useThisTestBootstrapFile: 'a.bootstrap.json',
        mockEndpointResponses: [
          {
            whenThisIsCalled: 'http://mockserver/v1/items?b=2&a=1',
            withMethod: 'POST',
            expectedPayload: '{"x":1}',
            expectedHeaders: { 'X-Tenant': ['t1'] },
            returnThisFile: 'items.response.txt',
            returnThisStatusCode: 201,
            mockedHeaders: { 'Content-Type': ['application/json'] },
            thisManyTimes: 2,
            delay: 5,
          },
          { whenThisIsCalled: 'http://mockserver/v1/other', returnThisBody: 'plain' },
        ],
        theseMetricsShouldHaveBeenSent: [
          { key: 'k', value: 1.5, timestamp: 1700000000000, dimensionMap: { d: 'x' } },
        ],
        theseLogsShouldHaveBeenSent: ['started'],
        logsShouldNotContain: ['Bearer '],
        makeTheseCalls: [
          {
            url: 'http://localhost:8080/in',
            method: 'POST',
            headers: [['Content-Type', 'text/plain']],
            body: 'b',
            expectedResponse: 'ok',
            expectedResponseCode: 202,
            expectedSize: 2,
            timeoutSeconds: 3,
          },
          { url: 'http://localhost:8080/in' },
        ],
        timestampOverride: 1700000000000,
        secondsToWaitForCompletion: 25,
        data: { region: 'eu' },
        variables: { TOKEN: 't' },
      }),
      'a.test.json',
    );
    expect(spec.skip).toBeUndefined();
    expect(spec.mockEndpointResponses[0]).toMatchObject({
      whenThisIsCalled: 'http://mockserver/v1/items?b=2&a=1',
      expectedHeaders: { 'x-tenant': ['t1'] },
      mockedHeaders: { 'content-type': ['application/json'] },
      returnThisStatusCode: 201,
      thisManyTimes: 2,
      delay: 5,
    });
    expect(spec.mockEndpointResponses[1]).toMatchObject({
      returnThisStatusCode: 200,
      delay: 0,
      thisManyTimes: undefined,
    });
    expect(spec.makeTheseCalls[1]).toMatchObject({
      method: 'GET',
      expectedResponseCode: 200,
      timeoutSeconds: 10,
    });
    expect(spec.makeTheseCalls[0]?.headers).toEqual([['Content-Type', 'text/plain']]);
    expect(spec.secondsToWaitForCompletion).toBe(25);
    expect(spec.variables).toEqual({ TOKEN: 't' });
    expect(spec.legacy).toEqual([]);
    expect(parseTestFile(json(minimal), 'm.test.json').secondsToWaitForCompletion).toBe(10);
  });

  it('accepts the legacy and loose forms seen in real suites and reports the legacy ones', () => {
    const spec = parseTestFile(
      json({
        enabled: true,
        fromDirectory: '',
        testThisRoute: 'legacy-step',
        useThisTestConfigFile: '../flows/a.json',
        mockEndpointResponses: [
          {
            whenThisIsCalled: 'http://mockserver/hello',
            returnThisStatusCode: '222',
            mockedHeaders: { A: 'one' },
          },
        ],
        theseMetricsShouldHaveBeenSent: [{ toThisRoute: 'r-1', key: 'k', value: 4.0 }],
      }),
      'old.test.json',
    );
    expect(spec.testThisStep).toBe('legacy-step');
    expect(spec.mockEndpointResponses[0]?.returnThisStatusCode).toBe(222);
    expect(spec.mockEndpointResponses[0]?.mockedHeaders).toEqual({ a: ['one'] });
    expect(spec.legacy.map((l) => l.field).sort()).toEqual([
      'enabled',
      'testThisRoute',
      'theseMetricsShouldHaveBeenSent[].toThisRoute',
    ]);
  });

  it.each([
    [{ ignore: true }, 'ignore: true'],
    [{ ignore: 'true' }, 'ignore: true'],
    [{ ignored: true }, 'ignored: true'],
    [{ enabled: false }, 'enabled: false'],
    [{ enabled: 'false' }, 'enabled: false'],
    [{ ignore: 'false', enabled: true }, undefined],
  ])('skips on %j', (extra, reason) => {
    expect(parseTestFile(json({ ...minimal, ...extra }), 't.test.json').skip).toBe(reason);
  });

  it('accepts a manifest with customizations (applied to the test workflow) or includes (instead of it)', () => {
    const custom = parseTestFile(
      json({
        ...minimal,
        manifest: { customizations: [{ op: 'delete', sourcePath: '$.workflows[0].steps[0].trigger' }] },
      }),
      't',
    );
    expect(custom.manifest).toBeDefined();
    const { useThisTestConfigFile: _omit, ...noFile } = minimal;
    const inc = parseTestFile(
      json({ ...noFile, manifest: { includes: [{ sourceWorkflow: 'a.json' }] } }),
      't',
    );
    expect(inc.useThisTestConfigFile).toBeUndefined();
  });

  it.each([
    ['an unknown property', { ...minimal, surprise: 1 }, '/surprise'],
    ['a missing fromDirectory', { testThisStep: 's', useThisTestConfigFile: 'a' }, '/fromDirectory'],
    [
      'both returnThisFile and returnThisBody',
      {
        ...minimal,
        mockEndpointResponses: [
          { whenThisIsCalled: 'http://mockserver/a', returnThisFile: 'f', returnThisBody: 'b' },
        ],
      },
      '/mockEndpointResponses/0',
    ],
    [
      'a status out of range',
      {
        ...minimal,
        mockEndpointResponses: [{ whenThisIsCalled: 'http://mockserver/a', returnThisStatusCode: '999' }],
      },
      '/mockEndpointResponses/0/returnThisStatusCode',
    ],
    [
      'a metric without value',
      { ...minimal, theseMetricsShouldHaveBeenSent: [{ key: 'k' }] },
      '/theseMetricsShouldHaveBeenSent/0/value',
    ],
    [
      'a lower-case method',
      { ...minimal, makeTheseCalls: [{ url: 'http://localhost:1/', method: 'get' }] },
      '/makeTheseCalls/0/method',
    ],
    ['testThisStep and testThisRoute', { ...minimal, testThisRoute: 'r' }, ''],
    ['no workflow at all', { fromDirectory: '/', testThisStep: 's' }, '/useThisTestConfigFile'],
    [
      'a workflow file and manifest includes',
      { ...minimal, manifest: { includes: [{ sourceWorkflow: 'a.json' }] } },
      '',
    ],
    [
      'a mock on another host',
      { ...minimal, mockEndpointResponses: [{ whenThisIsCalled: 'https://api.example.com/x' }] },
      '/mockEndpointResponses/0/whenThisIsCalled',
    ],
    [
      'a mock URL that does not parse',
      { ...minimal, mockEndpointResponses: [{ whenThisIsCalled: 'mockserver/x' }] },
      '/mockEndpointResponses/0/whenThisIsCalled',
    ],
    ['a relative call URL', { ...minimal, makeTheseCalls: [{ url: '/in' }] }, '/makeTheseCalls/0/url'],
  ])('rejects %s with TESTRUNNER_TEST_INVALID naming the file and pointer', (_name, doc, pointer) => {
    const err = errorOf(() => parseTestFile(json(doc), 'suite/x.test.json'));
    expect(err).toBeInstanceOf(TestRunnerError);
    expect(err.code).toBe('TESTRUNNER_TEST_INVALID');
    expect(err.message).toContain('suite/x.test.json');
    const errors = err.details?.errors ?? [];
    expect(errors.some((d) => d.pointer === pointer && d.file === 'suite/x.test.json')).toBe(true);
  });

  it('rejects duplicate keys and other malformed JSON with TESTRUNNER_JSON_INVALID', () => {
    expect(() => parseTestFile('{"fromDirectory":"a","fromDirectory":"b"}', 'd.test.json')).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_JSON_INVALID',
    );
    expect(() => parseTestFile('{"fromDirectory":', 'd.test.json')).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_JSON_INVALID',
    );
  });

  it('never echoes field values in its messages', () => {
    const err = errorOf(() => parseTestFile(json({ ...minimal, data: 'secret-value-123' }), 's.test.json'));
    expect(err.message).not.toContain('secret-value-123');
  });
});
