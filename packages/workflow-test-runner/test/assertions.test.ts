import { describe, expect, it } from 'vitest';
import {
  evaluateRun,
  type CallSpec,
  type Expectations,
  type MockCall,
  type MockEndpoint,
  type Observation,
} from '../src/index.js';

const enc = new TextEncoder();

const none: Expectations = { metrics: [], logs: [], logsAbsent: [], calls: [], endpoints: [] };
const nothing: Observation = { metrics: [], logs: [], calls: [], completed: true };

function endpoint(over: Partial<MockEndpoint> = {}): MockEndpoint {
  return {
    whenThisIsCalled: 'http://mockserver/a',
    withMethod: undefined,
    expectedPayload: undefined,
    expectedHeaders: undefined,
    returnThisFile: undefined,
    returnThisBody: undefined,
    returnThisStatusCode: 200,
    mockedHeaders: {},
    thisManyTimes: undefined,
    delay: 0,
    body: new Uint8Array(0),
    ...over,
  };
}

function call(over: Partial<MockCall> = {}): MockCall {
  return {
    seq: 0,
    url: 'http://mockserver/a',
    method: 'GET',
    headers: {},
    body: new Uint8Array(0),
    outcome: 'answered',
    endpoint: 0,
    status: 200,
    ...over,
  };
}

function callSpec(over: Partial<CallSpec> = {}): CallSpec {
  return {
    url: 'http://localhost:8080/x',
    method: 'GET',
    headers: [],
    body: undefined,
    expectedResponse: undefined,
    expectedResponseCode: 200,
    expectedSize: undefined,
    timeoutSeconds: 10,
    ...over,
  };
}

const kinds = (exp: Partial<Expectations>, obs: Partial<Observation> = {}, calls: MockCall[] = []) =>
  evaluateRun({ ...none, ...exp }, { ...nothing, ...obs }, calls).map((f) => f.kind);

const metric = { key: 'k', value: 1, timestamp: 1700000000000, dimensions: { ad_p: '1m' } };

describe('evaluateRun', () => {
  it('passes when everything expected happened', () => {
    const failures = evaluateRun(
      {
        metrics: [{ key: 'k', value: 1.0, timestamp: 1700000000000, dimensionMap: { ad_p: '1m' } }],
        logs: ['IdP certs updated'],
        logsAbsent: ['Bearer '],
        calls: [callSpec({ expectedResponse: '{"ok":true}', expectedSize: 11 })],
        endpoints: [endpoint()],
      },
      {
        ...nothing,
        metrics: [metric],
        logs: ['info: IdP certs updated: hash 1A'],
        calls: [{ status: 200, body: enc.encode('{"ok":true}') }],
      },
      [call()],
    );
    expect(failures).toEqual([]);
  });

  it('matches a metric on key and value only when timestamp and dimensionMap are not given', () => {
    expect(
      kinds(
        { metrics: [{ key: 'k', value: 1, timestamp: undefined, dimensionMap: undefined }] },
        { metrics: [metric] },
      ),
    ).toEqual([]);
  });

  it.each([
    ['a missing key', { key: 'other', value: 1, timestamp: undefined, dimensionMap: undefined }],
    ['another value', { key: 'k', value: 2, timestamp: undefined, dimensionMap: undefined }],
    ['another timestamp', { key: 'k', value: 1, timestamp: 1, dimensionMap: undefined }],
    ['a dimension more', { key: 'k', value: 1, timestamp: undefined, dimensionMap: { ad_p: '1m', ad: 'x' } }],
    ['a dimension less', { key: 'k', value: 1, timestamp: undefined, dimensionMap: {} }],
    ['another dimension value', { key: 'k', value: 1, timestamp: undefined, dimensionMap: { ad_p: '5m' } }],
  ])('fails metric-missing on %s, showing the sent metrics with that key', (_n, m) => {
    const [f] = evaluateRun({ ...none, metrics: [m] }, { ...nothing, metrics: [metric] }, []);
    expect(f?.kind).toBe('metric-missing');
    expect(f?.actual).toContain(m.key === 'k' ? '"ad_p":"1m"' : '"key":"k"');
  });

  it('fails log-missing when no line contains the expected text', () => {
    const [f] = evaluateRun({ ...none, logs: ['take:5000'] }, { ...nothing, logs: ['take:4999'] }, []);
    expect(f).toMatchObject({ kind: 'log-missing', expected: '"take:5000"', actual: 'take:4999' });
  });

  it('fails log-forbidden when a line contains a forbidden fragment', () => {
    const [f] = evaluateRun(
      { ...none, logsAbsent: ['Xyz123'] },
      { ...nothing, logs: ['ok', 'header Xyz123 sent'] },
      [],
    );
    expect(f).toMatchObject({ kind: 'log-forbidden', actual: 'header Xyz123 sent' });
  });

  it('fails mock-not-called, mock-call-count and mock-unexpected-call', () => {
    expect(kinds({ endpoints: [endpoint()] })).toEqual(['mock-not-called']);
    expect(kinds({ endpoints: [endpoint({ thisManyTimes: 2 })] }, {}, [call()])).toEqual(['mock-call-count']);
    expect(
      kinds({ endpoints: [endpoint()] }, {}, [
        call(),
        call({ seq: 1, outcome: 'unmatched', endpoint: null, status: 404 }),
      ]),
    ).toEqual(['mock-unexpected-call']);
    expect(
      kinds({ endpoints: [endpoint({ thisManyTimes: 1 })] }, {}, [
        call(),
        call({ seq: 1, outcome: 'exhausted', endpoint: null, status: 404 }),
      ]),
    ).toEqual(['mock-unexpected-call']);
  });

  it('issue 28: a call to another host fails nothing by itself (the workflow saw a refused connection)', () => {
    expect(
      kinds({}, {}, [
        call({ outcome: 'not-mock', endpoint: null, status: undefined, url: 'https://api.example.com/' }),
      ]),
    ).toEqual([]);
  });

  it('puts the mock call log into mock failures', () => {
    const [f] = evaluateRun(
      { ...none, endpoints: [endpoint(), endpoint({ whenThisIsCalled: 'http://mockserver/b' })] },
      nothing,
      [call()],
    );
    expect(f?.actual).toBe('#0 GET http://mockserver/a → endpoint 0, 200');
  });

  it('fails call-status, call-body, call-size and call-failed', () => {
    const body = enc.encode('{"status" : 401}');
    expect(kinds({ calls: [callSpec()] }, { calls: [{ status: 401, body }] })).toEqual(['call-status']);
    expect(
      kinds(
        { calls: [callSpec({ expectedResponseCode: 401, expectedResponse: '{"status" : 200}' })] },
        { calls: [{ status: 401, body }] },
      ),
    ).toEqual(['call-body']);
    expect(
      kinds(
        { calls: [callSpec({ expectedResponseCode: 401, expectedSize: 6424 })] },
        { calls: [{ status: 401, body }] },
      ),
    ).toEqual(['call-size']);
    expect(kinds({ calls: [callSpec()] }, { calls: [{ error: 'connection refused' }] })).toEqual([
      'call-failed',
    ]);
    expect(kinds({ calls: [callSpec(), callSpec()] }, { calls: [{ status: 200, body }] })).toEqual([
      'call-failed',
    ]);
  });

  it('renders a body that is not UTF-8 by its size, never as mojibake', () => {
    const [f] = evaluateRun(
      { ...none, calls: [callSpec({ expectedResponse: 'x' })] },
      { ...nothing, calls: [{ status: 200, body: new Uint8Array([0xff, 0xfe]) }] },
      [],
    );
    expect(f?.actual).toBe('<2 bytes, not UTF-8>');
  });
});
