import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCEPTED_MEDIA_TYPES,
  MULTIPART_OVERHEAD_BYTES,
  UploadError,
  acceptedMediaTypes,
  checkUploadHeaders,
  createCheckContinueListener,
} from '../src/index.js';
import type { ReadUploadOptions } from '../src/index.js';
import {
  STATUS,
  bodyPart,
  buildForm,
  multipartHead,
  rawExchange,
  startServer,
  stillServes,
} from './helpers.js';
import type { TestServer } from './helpers.js';

const L = 1000;
const FIELD = 100;
const OPTIONS: ReadUploadOptions = {
  multipartByteLimit: L,
  bodyFieldByteLimit: FIELD,
  rawBodyByteLimit: 500,
};
const CAP = L + FIELD + MULTIPART_OVERHEAD_BYTES;
const multipart = (length?: number): Record<string, string> => ({
  'content-type': 'multipart/form-data; boundary=abc',
  ...(length === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) }),
});

describe('checkUploadHeaders', () => {
  it('classifies accepted media types case-insensitively', () => {
    expect(checkUploadHeaders({ 'content-type': 'Application/JSON; charset=UTF-8' })).toBe('json');
    expect(checkUploadHeaders({ 'content-type': 'text/plain' })).toBe('text');
    expect(checkUploadHeaders({ 'content-type': 'application/octet-stream' })).toBe('octet');
    expect(checkUploadHeaders(multipart(), OPTIONS)).toBe('multipart');
    expect(checkUploadHeaders({})).toBe('empty');
  });

  it('S12: refuses multipart without multipartByteLimit with UPLOAD_NOT_MULTIPART, before judging the boundary', () => {
    expect(() => checkUploadHeaders(multipart())).toThrowCode(UploadError, 'UPLOAD_NOT_MULTIPART');
    expect(() => checkUploadHeaders({ 'content-type': 'multipart/form-data' })).toThrowCode(
      UploadError,
      'UPLOAD_NOT_MULTIPART',
    );
  });

  it('S14: the multipart request cap is L + body cap + overhead: exactly the cap passes, one more is UPLOAD_REQUEST_TOO_LARGE', () => {
    expect(checkUploadHeaders(multipart(CAP), OPTIONS)).toBe('multipart');
    expect(() => checkUploadHeaders(multipart(CAP + 1), OPTIONS)).toThrowCode(
      UploadError,
      'UPLOAD_REQUEST_TOO_LARGE',
    );
  });

  it('S6: a declared raw body of cap + 1 is UPLOAD_BODY_TOO_LARGE; exactly the cap passes', () => {
    const octet = (n: number) => ({
      'content-type': 'application/octet-stream',
      'content-length': String(n),
    });
    expect(checkUploadHeaders(octet(500), OPTIONS)).toBe('octet');
    expect(() => checkUploadHeaders(octet(501), OPTIONS)).toThrowCode(UploadError, 'UPLOAD_BODY_TOO_LARGE');
  });

  it('S9: refuses any content coding but identity with UPLOAD_CONTENT_ENCODING', () => {
    for (const coding of ['gzip', 'br', 'deflate', 'identity, gzip', 'x-gzip']) {
      expect(() =>
        checkUploadHeaders({ 'content-type': 'text/plain', 'content-encoding': coding }),
      ).toThrowCode(UploadError, 'UPLOAD_CONTENT_ENCODING');
    }
  });

  it('S10: refuses other media types with UPLOAD_UNSUPPORTED_MEDIA_TYPE and lists the accepted ones for Accept-Post', () => {
    for (const type of [
      'application/xml',
      'text/html',
      'application/x-www-form-urlencoded',
      'multipart/mixed',
    ]) {
      expect(() => checkUploadHeaders({ 'content-type': type }, OPTIONS)).toThrowCode(
        UploadError,
        'UPLOAD_UNSUPPORTED_MEDIA_TYPE',
      );
    }
    expect(ACCEPTED_MEDIA_TYPES).toContain('application/json');
    expect(acceptedMediaTypes()).toBe('application/json, text/plain, application/octet-stream');
    expect(acceptedMediaTypes(OPTIONS)).toBe(
      'application/json, text/plain, application/octet-stream, multipart/form-data',
    );
  });

  it('S24: refuses a missing, empty, long or non-bchars boundary with UPLOAD_BAD_BOUNDARY', () => {
    for (const params of [
      '',
      '; boundary=',
      `; boundary=${'x'.repeat(71)}`,
      '; boundary="a@b"',
      '; charset=x',
    ]) {
      const headers = { 'content-type': `multipart/form-data${params}` };
      expect(() => checkUploadHeaders(headers, OPTIONS), params).toThrowCode(
        UploadError,
        'UPLOAD_BAD_BOUNDARY',
      );
    }
    const ok = { 'content-type': `multipart/form-data; boundary="${"'()+_,-./:=? x".repeat(5)}"` };
    expect(checkUploadHeaders(ok, OPTIONS)).toBe('multipart');
  });
});

describe('createCheckContinueListener', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startServer(OPTIONS, (server) => {
      const onRequest = server.listeners('request')[0] as (req: IncomingMessage, res: ServerResponse) => void;
      server.on(
        'checkContinue',
        createCheckContinueListener({
          optionsFor: () => OPTIONS,
          onRejected: (error, _req, res) => {
            const payload = JSON.stringify({ code: error.code });
            res.writeHead(STATUS[error.code], { 'content-length': Buffer.byteLength(payload) }).end(payload);
          },
          onRequest,
        }),
      );
    });
  });
  afterAll(() => srv.close());

  it('S8: answers Expect: 100-continue over the limit with 413 UPLOAD_REQUEST_TOO_LARGE, no 100 Continue and no body read', async () => {
    const answer = await rawExchange(srv.port, multipartHead(CAP + 1, ['Expect: 100-continue']));
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer!.body)).toEqual({ code: 'UPLOAD_REQUEST_TOO_LARGE' });
    expect(answer!.raw).not.toContain('100 Continue');
    expect(answer!.head.toLowerCase()).toContain('connection: close');
    expect(await stillServes(srv.url)).toBe(true);
  });

  it('S8: answers 100 Continue within the limit, then reads the body', async () => {
    const form = buildForm([bodyPart('{"a":1}')]);
    const answer = await rawExchange(srv.port, multipartHead(form.length, ['Expect: 100-continue']), [form], {
      bodyDelayMs: 50,
    });
    expect(answer?.raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    expect(answer?.status).toBe(200);
    expect(JSON.parse(answer!.body)).toMatchObject({ kind: 'multipart', body: '{"a":1}' });
  });

  it('S12: answers Expect: 100-continue for multipart at a step without a limit with 415 UPLOAD_NOT_MULTIPART', async () => {
    const local = await startServer({}, (server) => {
      server.on(
        'checkContinue',
        createCheckContinueListener({
          optionsFor: () => ({}),
          onRejected: (error, _req, res) => res.writeHead(STATUS[error.code], { 'content-length': 0 }).end(),
          onRequest: () => undefined,
        }),
      );
    });
    try {
      const answer = await rawExchange(local.port, multipartHead(10, ['Expect: 100-continue']));
      expect(answer?.status).toBe(415);
      expect(answer?.raw).not.toContain('100 Continue');
    } finally {
      await local.close();
    }
  });
});
