import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createMockServer,
  renderMockCalls,
  TestRunnerError,
  UNMATCHED_STATUS,
  type MockEndpoint,
} from '../src/index.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

function ep(over: Partial<MockEndpoint> & { whenThisIsCalled: string }): MockEndpoint {
  return {
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

const get = (url: string, extra: Record<string, unknown> = {}) => ({
  url,
  method: 'GET',
  headers: {},
  ...extra,
});

describe('createMockServer', () => {
  it('answers by full URL with the configured status, headers and body bytes verbatim', async () => {
    const body = enc.encode('not json {');
    const mock = createMockServer([
      ep({
        whenThisIsCalled: 'http://mockserver/a?x=1',
        returnThisStatusCode: 201,
        mockedHeaders: { 'x-id': ['7'] },
        body,
      }),
    ]);
    const res = await mock.transport(get('http://mockserver/a?x=1'));
    expect(res.status).toBe(201);
    expect(res.headers).toEqual({ 'x-id': ['7'] });
    expect(dec.decode(res.body)).toBe('not json {');
    expect(mock.calls()).toMatchObject([{ seq: 0, outcome: 'answered', endpoint: 0, status: 201 }]);
    expect(mock.counts()).toEqual([1]);
  });

  it('compares URLs after WHATWG normalisation, query included', async () => {
    const mock = createMockServer([ep({ whenThisIsCalled: new URL('http://MockServer:80/a/%7e?b').href })]);
    expect((await mock.transport(get('http://mockserver/a/%7e?b'))).status).toBe(200);
    expect((await mock.transport(get('http://mockserver/a/%7e?c'))).status).toBe(UNMATCHED_STATUS);
  });

  it('tells two endpoints with the same URL apart by expectedPayload', async () => {
    const mock = createMockServer([
      ep({
        whenThisIsCalled: 'http://mockserver/hello',
        expectedPayload: 'hello world',
        returnThisStatusCode: 222,
      }),
      ep({
        whenThisIsCalled: 'http://mockserver/hello',
        expectedPayload: 'hello kitty',
        returnThisStatusCode: 333,
      }),
    ]);
    expect(
      (await mock.transport({ ...get('http://mockserver/hello'), method: 'POST', body: 'hello kitty' }))
        .status,
    ).toBe(333);
    expect(
      (
        await mock.transport({
          ...get('http://mockserver/hello'),
          method: 'POST',
          body: enc.encode('hello world'),
        })
      ).status,
    ).toBe(222);
    const miss = await mock.transport({
      ...get('http://mockserver/hello'),
      method: 'POST',
      body: 'hello there',
    });
    expect(miss.status).toBe(UNMATCHED_STATUS);
    expect(mock.calls()[2]?.reasons).toEqual([
      'endpoint 0: payload differs from expectedPayload',
      'endpoint 1: payload differs from expectedPayload',
    ]);
  });

  it('matches withMethod and expectedHeaders (names case-insensitive)', async () => {
    const mock = createMockServer([
      ep({
        whenThisIsCalled: 'http://mockserver/a',
        withMethod: 'POST',
        expectedHeaders: { authorization: ['Basic eA=='] },
      }),
    ]);
    expect(
      (
        await mock.transport({
          ...get('http://mockserver/a'),
          method: 'post',
          headers: { Authorization: 'Basic eA==' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await mock.transport({ ...get('http://mockserver/a'), headers: { authorization: 'Basic eA==' } }))
        .status,
    ).toBe(404);
    expect(
      (
        await mock.transport({
          ...get('http://mockserver/a'),
          method: 'POST',
          headers: { authorization: ['other'] },
        })
      ).status,
    ).toBe(404);
    expect((await mock.transport({ ...get('http://mockserver/a'), method: 'POST' })).status).toBe(404);
    expect(mock.calls().map((c) => c.reasons?.join())).toEqual([
      undefined,
      'endpoint 0: method GET, expected POST',
      'endpoint 0: header "authorization" differs',
      'endpoint 0: header "authorization" missing',
    ]);
  });

  it('honours thisManyTimes: later calls go to the next endpoint, or are recorded as exhausted', async () => {
    const mock = createMockServer([
      ep({ whenThisIsCalled: 'http://mockserver/n', thisManyTimes: 1, returnThisStatusCode: 201 }),
      ep({ whenThisIsCalled: 'http://mockserver/m', thisManyTimes: 1 }),
    ]);
    expect((await mock.transport(get('http://mockserver/n'))).status).toBe(201);
    expect((await mock.transport(get('http://mockserver/n'))).status).toBe(404);
    expect(mock.calls()[1]).toMatchObject({ outcome: 'exhausted', endpoint: null });
  });

  it('waits delay ms through the injected sleep before answering', async () => {
    const waits: number[] = [];
    const mock = createMockServer([ep({ whenThisIsCalled: 'http://mockserver/slow', delay: 1000 })], {
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
    });
    await mock.transport(get('http://mockserver/slow'));
    expect(waits).toEqual([1000]);
  });

  it('aborts a pending delay with the request signal and records the call as aborted, not answered', async () => {
    const mock = createMockServer([ep({ whenThisIsCalled: 'http://mockserver/slow', delay: 60_000 })]);
    const ac = new AbortController();
    const pending = mock.transport({ ...get('http://mockserver/slow'), signal: ac.signal });
    expect(mock.calls()).toMatchObject([{ outcome: 'answered', status: 200 }]);
    ac.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(mock.calls()).toEqual([
      expect.objectContaining({
        outcome: 'aborted',
        endpoint: 0,
        reasons: ['no answer: the request was aborted during its 60000 ms delay'],
      }),
    ]);
    expect(mock.calls()[0]).not.toHaveProperty('status');
    expect(mock.counts()).toEqual([1]);
    expect(renderMockCalls(mock.calls())).toBe(
      '#0 GET http://mockserver/slow → endpoint 0, not sent (no answer: the request was aborted during its 60000 ms delay)',
    );
  });

  describe('close (issue 27: the test has ended)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('cuts every pending delay at once with TESTRUNNER_TIMEOUT, records it as aborted and clears its timer', async () => {
      vi.useFakeTimers();
      const mock = createMockServer([
        ep({ whenThisIsCalled: 'http://mockserver/slow', delay: 5_000 }),
        ep({ whenThisIsCalled: 'http://mockserver/slower', delay: 600_000 }),
      ]);
      const pending = [
        mock.transport(get('http://mockserver/slow')),
        mock.transport(get('http://mockserver/slower')),
      ];
      expect(vi.getTimerCount()).toBe(2);
      mock.close();
      // Recorded in the abort itself: a caller reading the log right after close() sees no answer sent.
      expect(mock.calls().map((c) => c.outcome)).toEqual(['aborted', 'aborted']);
      for (const p of pending) await expect(p).rejects.toThrowCode(TestRunnerError, 'TESTRUNNER_TIMEOUT');
      expect(vi.getTimerCount()).toBe(0); // nothing left to keep the process alive
      expect(mock.calls().map((c) => [c.outcome, c.endpoint, c.status, c.reasons])).toEqual([
        ['aborted', 0, undefined, ['no answer: the test had ended during its 5000 ms delay']],
        ['aborted', 1, undefined, ['no answer: the test had ended during its 600000 ms delay']],
      ]);
    });

    it('refuses later requests with TESTRUNNER_TIMEOUT, recorded as aborted; calling it twice is harmless', async () => {
      const mock = createMockServer([ep({ whenThisIsCalled: 'http://mockserver/a' })]);
      expect((await mock.transport(get('http://mockserver/a'))).status).toBe(200);
      mock.close();
      mock.close();
      await expect(mock.transport(get('http://mockserver/a'))).rejects.toThrowCode(
        TestRunnerError,
        'TESTRUNNER_TIMEOUT',
      );
      expect(mock.calls().map((c) => [c.outcome, c.endpoint, c.reasons])).toEqual([
        ['answered', 0, undefined],
        ['aborted', null, ['no answer: the test had ended']],
      ]);
      expect(mock.counts()).toEqual([1]);
    });

    it('starts no delay for a call that arrives already cut (its test is over)', async () => {
      const waits: number[] = [];
      const mock = createMockServer([ep({ whenThisIsCalled: 'http://mockserver/slow', delay: 60_000 })], {
        sleep: (ms) => (waits.push(ms), Promise.resolve()),
      });
      const signal = AbortSignal.abort(new TestRunnerError('TESTRUNNER_TIMEOUT', 'the wait ended'));
      await expect(mock.transport({ ...get('http://mockserver/slow'), signal })).rejects.toThrowCode(
        TestRunnerError,
        'TESTRUNNER_TIMEOUT',
      );
      expect(waits).toEqual([]);
      expect(mock.calls()[0]).toMatchObject({ outcome: 'aborted', endpoint: 0 });
    });

    it('a deployer cutting a call with TESTRUNNER_TIMEOUT is recorded as the end of the test', async () => {
      const mock = createMockServer([ep({ whenThisIsCalled: 'http://mockserver/slow', delay: 60_000 })]);
      const ac = new AbortController();
      const pending = mock.transport({ ...get('http://mockserver/slow'), signal: ac.signal });
      ac.abort(new TestRunnerError('TESTRUNNER_TIMEOUT', 'the wait ended'));
      await expect(pending).rejects.toThrowCode(TestRunnerError, 'TESTRUNNER_TIMEOUT');
      expect(mock.calls()[0]?.reasons).toEqual(['no answer: the test had ended during its 60000 ms delay']);
    });
  });

  it('S156: refuses a host that is not the mock with TESTRUNNER_HOST_NOT_MOCKED and records it as not sent', async () => {
    const mock = createMockServer([ep({ whenThisIsCalled: 'http://mockserver/a' })]);
    for (const url of [
      'https://ledger.example.com/v1/a?token=s3cret',
      'http://127.0.0.1:9/a',
      'http://mockserver.example.com/a',
      'not a url',
    ]) {
      await expect(mock.transport(get(url))).rejects.toThrowCode(
        TestRunnerError,
        'TESTRUNNER_HOST_NOT_MOCKED',
      );
    }
    const err = (await mock
      .transport(get('https://ledger.example.com/v1/a?token=s3cret'))
      .catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('https://ledger.example.com');
    expect(err.message).not.toContain('s3cret');
    expect(mock.calls().every((c) => c.outcome === 'not-mock' && c.status === undefined)).toBe(true);
    expect(mock.counts()).toEqual([0]);
  });

  it('S156: a real server on loopback receives nothing when a workflow calls it instead of the mock', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('contacted');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const mock = createMockServer([]);
      await expect(mock.transport(get(`http://127.0.0.1:${port}/`))).rejects.toThrowCode(
        TestRunnerError,
        'TESTRUNNER_HOST_NOT_MOCKED',
      );
      const direct = await fetch(`http://127.0.0.1:${port}/`); // the server works: the refusal was the mock's
      expect(await direct.text()).toBe('contacted');
      expect(hits).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('hands out a copy of the body so a caller cannot change the next answer', async () => {
    const mock = createMockServer([ep({ whenThisIsCalled: 'http://mockserver/a', body: enc.encode('abc') })]);
    const first = await mock.transport(get('http://mockserver/a'));
    first.body.fill(0);
    expect(dec.decode((await mock.transport(get('http://mockserver/a'))).body)).toBe('abc');
  });
});
