import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DRAIN_MAX_BYTES,
  PROBLEM_CODE_LOCAL,
  codedProblem,
  internalProblem,
  requestIdOf,
  writeInternalProblem,
  writeProblem,
} from '../src/index.js';
import { RawClient } from '@org/test-utils';
import { serve } from './helpers.js';

const ID = '11111111-2222-4333-8444-555555555555';
const body = codedProblem('UPLOAD_BODY_TOO_LARGE', 413, 'the body is larger than 10 bytes', ID);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});
async function server(handler: Parameters<typeof serve>[0]): Promise<number> {
  const s = await serve(handler);
  closers.push(s.close);
  return s.port;
}
const post = (length: number, sent: string, extra = '') =>
  `POST /x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n${sent}`;
const get = 'GET /next HTTP/1.1\r\nHost: a\r\n\r\n';

describe('writeProblem', () => {
  it('sends the problem headers, the status, the request id and the body', async () => {
    const port = await server((req, res) => writeProblem(req, res, body, { allow: 'POST' }));
    const c = await RawClient.open(port);
    c.write(get);
    const r = await c.response();
    c.destroy();
    expect(r.status).toBe(413);
    expect(r.headers).toMatchObject({
      'content-type': 'application/problem+json',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      'x-request-id': ID,
      allow: 'POST',
    });
    expect(r.headers['connection']).not.toBe('close');
    expect(JSON.parse(r.body)).toEqual({
      type: 'urn:example:oapp:problem:upload-body-too-large',
      title: 'Body too large',
      status: 413,
      detail: 'the body is larger than 10 bytes',
      instance: `urn:uuid:${ID}`,
      code: 'UPLOAD_BODY_TOO_LARGE',
    });
  });

  it('keeps a non-UUID request id in the header and records the problem code in res.locals', async () => {
    const kept = codedProblem('UPLOAD_BODY_TOO_LARGE', 413, 'too large', 'trace-7:a.b_c');
    let locals: Record<string, unknown> = {};
    const port = await server((req, res) => {
      locals = {};
      (res as ServerResponse & { locals: Record<string, unknown> }).locals = locals;
      writeProblem(req, res, kept);
    });
    const c = await RawClient.open(port);
    c.write(get);
    const r = await c.response();
    c.destroy();
    expect(r.headers['x-request-id']).toBe('trace-7:a.b_c');
    expect(JSON.parse(r.body).instance).toBe('urn:example:oapp:request:trace-7:a.b_c');
    expect(locals[PROBLEM_CODE_LOCAL]).toBe('UPLOAD_BODY_TOO_LARGE');
  });

  it('drains a small unread body first, so the next request on the connection is answered', async () => {
    let n = 0;
    const port = await server((req, res) => {
      n++;
      if (req.method === 'POST') writeProblem(req, res, body);
      else res.end('next');
    });
    const c = await RawClient.open(port);
    c.write(post(10, '01234'));
    setTimeout(() => c.write('56789'), 20);
    const first = await c.response();
    expect(first.status).toBe(413);
    expect(first.headers['connection']).not.toBe('close');
    c.write(get);
    const second = await c.response();
    c.destroy();
    expect(second.body).toBe('next');
    expect(n).toBe(2);
  });

  it('does not read a body over DRAIN_MAX_BYTES, an undeclared one or one behind Expect: answers with Connection: close', async () => {
    const port = await server((req, res) => writeProblem(req, res, body));
    for (const head of [
      post(DRAIN_MAX_BYTES + 1, 'x'),
      'POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n',
      post(10, '', 'Expect: 100-continue\r\n'),
    ]) {
      const c = await RawClient.open(port);
      c.write(head);
      let r = await c.response();
      if (r.status === 100) r = await c.response(); // node answers Expect itself when nobody listens
      expect(r.status).toBe(413);
      expect(r.headers['connection']).toBe('close');
      await c.closed();
    }
  });

  it('destroys a response whose headers already went out', async () => {
    const port = await server((req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      writeProblem(req, res, body);
    });
    const c = await RawClient.open(port);
    c.write(get);
    await c.closed();
    expect(c.ended).toBe(true);
  });
});

describe('writeInternalProblem', () => {
  it('logs one line with the request id, name and stack frames (never the message), and answers the generic 500 with the same id', async () => {
    const lines: { msg: string; fields: Record<string, string | undefined> }[] = [];
    const log = {
      error: (msg: string, fields: Record<string, string | undefined>) => lines.push({ msg, fields }),
    };
    const port = await server((req, res) => writeInternalProblem(req, res, new RangeError('db down'), log));
    const c = await RawClient.open(port);
    c.write(get);
    const r = await c.response();
    c.destroy();
    const parsed = JSON.parse(r.body) as { instance: string };
    expect(parsed).toEqual({ ...internalProblem(r.headers['x-request-id']!) });
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toBe('unhandled request error');
    expect(lines[0]!.fields).toMatchObject({
      reqId: r.headers['x-request-id'],
      error: 'RangeError',
    });
    expect(lines[0]!.fields['stack']).toMatch(/^ {4}at /);
    expect(JSON.stringify(lines[0])).not.toContain('db down');
    // A message over several lines, and one that looks like a frame, stay out too.
    const tricky = new Error('key AAAA\n    at not-a-frame (secret)');
    const port2 = await server((req, res) => writeInternalProblem(req, res, tricky, log));
    const c2 = await RawClient.open(port2);
    c2.write(get);
    await c2.response();
    c2.destroy();
    expect(JSON.stringify(lines[1])).not.toContain('secret');
    expect(JSON.stringify(lines[1])).not.toContain('AAAA');
    expect(parsed.instance).toBe(`urn:uuid:${lines[0]!.fields['reqId']}`);
    expect(r.body).not.toContain('db down');
  });
});

describe('requestIdOf', () => {
  it('uses res.locals.requestId, else makes one and keeps it there', () => {
    const withId = { locals: { requestId: ID } } as unknown as ServerResponse;
    expect(requestIdOf(withId)).toBe(ID);
    const without = { locals: {} } as unknown as ServerResponse & { locals: Record<string, unknown> };
    const made = requestIdOf(without);
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    expect(without.locals['requestId']).toBe(made);
    expect(requestIdOf({} as ServerResponse)).not.toBe(requestIdOf({} as ServerResponse));
  });
});
