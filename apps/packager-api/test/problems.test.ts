import type { AddressInfo } from 'node:net';
import { RawClient } from '@org/test-utils';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBody } from '../src/body-json.js';
import { RequestError } from '../src/errors.js';
import { STATUS_BY_CODE, errorMiddleware } from '../src/http-errors.js';
import { createLogger } from '../src/logger.js';
import { requestLog } from '../src/request-log.js';
import { useServer } from './helpers.js';

const srv = useServer();
const port = () => Number(new URL(srv.url).port);
const post = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

describe('problem responses', () => {
  it('carry application/problem+json, nosniff, no-store and the request id of instance', async () => {
    const res = await fetch(`${srv.url}/no-such-path`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { instance: string; code: string };
    expect(body.code).toBe('REQUEST_NOT_FOUND');
    expect(body.instance).toBe(`urn:uuid:${res.headers.get('x-request-id')}`);
  });

  it('drain a small unread body, so the next request on the same connection is answered', async () => {
    const c = await RawClient.open(port());
    c.write(post('/no-such-path', '{"a":1}'));
    const first = await c.response();
    expect(first.status).toBe(404);
    expect(first.headers['connection']).not.toBe('close');
    c.write('GET /health HTTP/1.1\r\nHost: a\r\n\r\n');
    const second = await c.response();
    c.destroy();
    expect(second.status).toBe(200);
  });

  it('close the connection instead of reading a large unread body', async () => {
    const c = await RawClient.open(port());
    c.write(`POST /no-such-path HTTP/1.1\r\nHost: a\r\nContent-Length: ${1024 * 1024}\r\n\r\n{"a":`);
    const r = await c.response();
    expect(r.status).toBe(404);
    expect(r.headers['connection']).toBe('close');
    await c.closed();
  });
});

describe('a request body over the JSON cap', () => {
  it('is REQUEST_BODY_TOO_LARGE, answered 413 like the agent does', () => {
    expect(() => parseBody(`"${'a'.repeat(20)}"`, 10)).toThrowCode(RequestError, 'REQUEST_BODY_TOO_LARGE');
    expect(STATUS_BY_CODE.REQUEST_BODY_TOO_LARGE).toBe(413);
  });
  // Over HTTP the upload reader refuses first, also 413 (UPLOAD_BODY_TOO_LARGE, UPLOAD_FIELD_TOO_LARGE):
  // test/workflows.test.ts and test/workflow-package.test.ts.
});

describe('errorMiddleware', () => {
  const lines: Record<string, unknown>[] = [];
  let server: ReturnType<express.Express['listen']>;
  let url = '';
  beforeAll(async () => {
    const log = createLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    const app = express();
    app.use(requestLog(log));
    app.get('/boom', () => {
      throw new TypeError('internal detail');
    });
    app.use(errorMiddleware(log));
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
    const body = (await res.json()) as Record<string, unknown>;
    const reqId = res.headers.get('x-request-id');
    expect(body).toEqual({
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
});
