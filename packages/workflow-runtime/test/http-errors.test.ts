import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redactor } from '@org/workflow-engine';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentError } from '../src/errors.js';
import { STATUS_BY_CODE, errorMiddleware } from '../src/http-errors.js';
import { checkJsonBody } from '../src/http/trigger-handler.js';
import { createOutput } from '../src/output.js';

describe('errorMiddleware', () => {
  const lines: Record<string, unknown>[] = [];
  let server: Server;
  let url = '';
  beforeAll(async () => {
    const output = createOutput((l) => lines.push(JSON.parse(l) as Record<string, unknown>), new Redactor());
    const app = express();
    app.get('/boom', () => {
      throw new TypeError('internal detail');
    });
    app.get('/coded', () => {
      throw new AgentError('AGENT_ROUTE_NOT_FOUND', 'no trigger on this server matches the path');
    });
    app.use(errorMiddleware(output));
    await new Promise<void>((resolve) => (server = app.listen(0, '127.0.0.1', () => resolve())));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('logs an unknown error with the request id and answers the generic 500 with the same id', async () => {
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const reqId = res.headers.get('x-request-id');
    expect(await res.json()).toEqual({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      instance: `urn:uuid:${reqId}`,
      code: 'INTERNAL',
    });
    const line = lines.find((l) => l['msg'] === 'unhandled request error');
    expect(line).toMatchObject({ level: 'error', reqId, error: 'TypeError' });
    // Where it was thrown, never what it said: the message may quote request data.
    expect(line!['stack']).toMatch(/^ {4}at /);
    expect(JSON.stringify(line)).not.toContain('internal detail');
  });

  it('answers a coded error with its status and the same problem headers', async () => {
    const res = await fetch(`${url}/coded`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: 'urn:example:oapp:problem:agent-route-not-found',
      status: 404,
      code: 'AGENT_ROUTE_NOT_FOUND',
      instance: `urn:uuid:${res.headers.get('x-request-id')}`,
    });
  });
});

describe('checkJsonBody', () => {
  it('refuses a body over the JSON cap with AGENT_BODY_TOO_LARGE, answered 413 like the packager does', () => {
    expect(() => checkJsonBody(`"${'a'.repeat(20)}"`, { rawBodyBytes: 10 })).toThrowCode(
      AgentError,
      'AGENT_BODY_TOO_LARGE',
    );
    expect(STATUS_BY_CODE.AGENT_BODY_TOO_LARGE).toBe(413);
  });

  it.each([
    ['{"a":', 'AGENT_BODY_NOT_JSON'],
    ['"\\ud800"', 'AGENT_BODY_NOT_JSON'],
    ['{"a":1,"a":2}', 'AGENT_BODY_DUPLICATE_KEY'],
    ['['.repeat(65) + ']'.repeat(65), 'AGENT_BODY_TOO_DEEP'],
  ] as const)('refuses %j with %s (S2, S3, S65, S66)', (text, code) => {
    expect(() => checkJsonBody(text, { rawBodyBytes: 1 << 20 })).toThrowCode(AgentError, code);
  });

  it('accepts strict JSON, __proto__ included, and no body at all', () => {
    expect(() => checkJsonBody('{"__proto__":{"x":1}}', { rawBodyBytes: 100 })).not.toThrow();
    expect(() => checkJsonBody(undefined, { rawBodyBytes: 100 })).not.toThrow();
  });
});
