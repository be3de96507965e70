import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadError, readUpload } from '../src/index.js';
import type { ReadUploadOptions } from '../src/index.js';
import { chunkedEncoding, generated, post, rawExchange, startServer, stillServes } from './helpers.js';
import type { TestServer } from './helpers.js';

const RAW_CAP = 256 * 1024;
const OPTIONS: ReadUploadOptions = { rawBodyByteLimit: RAW_CAP, multipartByteLimit: 1024 };

/** A stand-in request whose body is produced on demand, recording how many bytes were pulled. */
function fakeRequest(
  headers: Record<string, string>,
  total = Infinity,
): IncomingMessage & { pulled: number } {
  let pulled = 0;
  const req = new Readable({
    read() {
      if (pulled >= total) return void this.push(null);
      const n = Math.min(16 * 1024, total - pulled);
      pulled += n;
      this.push(Buffer.alloc(n, 0x61));
    },
  }) as unknown as IncomingMessage & { pulled: number; complete: boolean };
  Object.defineProperty(req, 'pulled', { get: () => pulled });
  Object.assign(req, { headers, complete: false });
  return req;
}

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer(OPTIONS);
});
afterAll(() => srv.close());

describe('readUpload: json and text', () => {
  it('S1: delivers an application/json body as exactly the bytes sent', async () => {
    const res = await post(srv.url, '{"a":1}', { 'content-type': 'application/json' });
    expect(res).toEqual({ status: 200, json: { kind: 'json', body: '{"a":1}', bytes: 0 } });
  });

  it('S2: delivers invalid JSON unparsed, so the app answers FORMAT_JSON_INVALID with its strict parser', async () => {
    const res = await post(srv.url, '{"a":', { 'content-type': 'application/json; charset=utf-8' });
    expect(res.json.body).toBe('{"a":');
  });

  it('S3: delivers JSON nested 100 000 levels deep as a string without parsing it; the process stays up', async () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    const res = await post(srv.url, deep, { 'content-type': 'application/json' });
    expect(res.json.body).toBe(deep);
    expect(await stillServes(srv.url)).toBe(true);
  });

  it('S4: delivers a __proto__ JSON body as plain text; no prototype changes', async () => {
    const text = '{"__proto__":{"polluted":true}}';
    const res = await post(srv.url, text, { 'content-type': 'application/json' });
    expect(res.json.body).toBe(text);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('delivers text/plain with a UTF-8 BOM and multibyte text byte-exact', async () => {
    const text = '\ufeffhé ✓ 𝄞';
    const res = await post(srv.url, text, { 'content-type': 'text/plain' });
    expect(res.json).toMatchObject({ kind: 'text', body: text });
  });

  it('rejects invalid UTF-8 with UPLOAD_BODY_NOT_UTF8, never replacing it by U+FFFD', async () => {
    const res = await post(srv.url, new Uint8Array([0x7b, 0xc3, 0x28, 0x7d]), {
      'content-type': 'application/json',
    });
    expect(res).toMatchObject({ status: 400, json: { code: 'UPLOAD_BODY_NOT_UTF8' } });
    await expect(
      readUpload(fakeRequest({ 'content-type': 'text/plain', 'content-length': '2' }, 0)),
    ).resolves.toEqual({
      kind: 'text',
      body: '',
      stream: undefined,
    });
  });

  it('rejects a charset other than utf-8 with UPLOAD_UNSUPPORTED_MEDIA_TYPE', async () => {
    const req = fakeRequest({ 'content-type': 'text/plain; charset=latin1', 'content-length': '3' }, 3);
    await expect(readUpload(req, OPTIONS)).rejects.toThrowCode(UploadError, 'UPLOAD_UNSUPPORTED_MEDIA_TYPE');
  });

  it('rejects a JSON body of cap + 1 bytes with UPLOAD_BODY_TOO_LARGE and accepts exactly the cap', async () => {
    const ok = await post(srv.url, 'x'.repeat(RAW_CAP), { 'content-type': 'text/plain' });
    expect(ok.json.body?.length).toBe(RAW_CAP);
    const req = fakeRequest({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    await expect(readUpload(req, OPTIONS)).rejects.toThrowCode(UploadError, 'UPLOAD_BODY_TOO_LARGE');
    expect(req.pulled).toBeLessThanOrEqual(RAW_CAP + 32 * 1024);
  });

  it('answers a request without content type and without body as kind empty', async () => {
    const req = fakeRequest({}, 0);
    await expect(readUpload(req)).resolves.toEqual({ kind: 'empty', body: undefined, stream: undefined });
    const withBody = fakeRequest({ 'content-length': '3' }, 3);
    await expect(readUpload(withBody)).rejects.toThrowCode(UploadError, 'UPLOAD_UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('readUpload: octet-stream', () => {
  it('S5: accepts 0 bytes of application/octet-stream with an empty stream, not undefined', async () => {
    const res = await post(srv.url, new Uint8Array(0), { 'content-type': 'application/octet-stream' });
    expect(res.json).toMatchObject({ kind: 'octet', bytes: 0, sha: expect.any(String) as string });
  });

  it('S6: refuses a declared Content-Length of cap + 1 with UPLOAD_BODY_TOO_LARGE before reading a body byte', async () => {
    const req = fakeRequest({
      'content-type': 'application/octet-stream',
      'content-length': String(RAW_CAP + 1),
    });
    await expect(readUpload(req, OPTIONS)).rejects.toThrowCode(UploadError, 'UPLOAD_BODY_TOO_LARGE');
    expect(req.pulled).toBe(0);
    // Over a real socket: the answer comes although no body byte was ever sent.
    const head = `POST / HTTP/1.1\nHost: x\nContent-Type: application/octet-stream\nContent-Length: ${RAW_CAP + 1}\n`;
    const answer = await rawExchange(srv.port, head);
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer!.body)).toEqual({ code: 'UPLOAD_BODY_TOO_LARGE' });
    expect(await stillServes(srv.url)).toBe(true);
  });

  it('S7: errors a chunked octet-stream one byte over the cap with UPLOAD_BODY_TOO_LARGE while streaming, reading boundedly', async () => {
    const head =
      'POST / HTTP/1.1\nHost: x\nContent-Type: application/octet-stream\nTransfer-Encoding: chunked\n';
    const answer = await rawExchange(srv.port, head, chunkedEncoding(generated(RAW_CAP + 1, 4096)));
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer!.body)).toEqual({ code: 'UPLOAD_BODY_TOO_LARGE' });
    // Bounded memory: from an endless body only the cap plus stream buffers is ever pulled.
    const req = fakeRequest({ 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' });
    const up = await readUpload(req, OPTIONS);
    await expect(Readable.from(up.stream!).toArray()).rejects.toThrowCode(
      UploadError,
      'UPLOAD_BODY_TOO_LARGE',
    );
    expect(req.pulled).toBeLessThanOrEqual(RAW_CAP + 64 * 1024);
    expect(await stillServes(srv.url)).toBe(true);
  });

  it('streams exactly the cap of octet-stream bytes byte-identical', async () => {
    const bytes = Buffer.concat([...generated(RAW_CAP, 1000)]);
    const res = await post(srv.url, bytes, { 'content-type': 'application/octet-stream' });
    const { sha256 } = await import('./helpers.js');
    expect(res.json).toMatchObject({ kind: 'octet', bytes: RAW_CAP, sha: sha256(bytes) });
  });
});

describe('readUpload: refused before reading', () => {
  it('S9: refuses Content-Encoding: gzip with UPLOAD_CONTENT_ENCODING; nothing is decompressed', async () => {
    const res = await post(srv.url, 'x', { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    expect(res).toMatchObject({ status: 415, json: { code: 'UPLOAD_CONTENT_ENCODING' } });
    const req = fakeRequest(
      { 'content-type': 'text/plain', 'content-encoding': 'identity', 'content-length': '0' },
      0,
    );
    await expect(readUpload(req)).resolves.toMatchObject({ kind: 'text', body: '' });
  });

  it('S10: refuses application/xml with UPLOAD_UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await post(srv.url, '<a/>', { 'content-type': 'application/xml' });
    expect(res).toMatchObject({ status: 415, json: { code: 'UPLOAD_UNSUPPORTED_MEDIA_TYPE' } });
    for (const bad of [
      'text',
      'text/',
      '/plain',
      'text/plain; charset',
      'text/plain;;',
      'text/plain; a="b',
    ]) {
      const req = fakeRequest({ 'content-type': bad, 'content-length': '1' }, 1);
      await expect(readUpload(req)).rejects.toThrowCode(UploadError, 'UPLOAD_UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('rejects with UPLOAD_ABORTED when the signal is already aborted', async () => {
    const req = fakeRequest({ 'content-type': 'text/plain', 'content-length': '1' }, 1);
    await expect(readUpload(req, { signal: AbortSignal.abort() })).rejects.toThrowCode(
      UploadError,
      'UPLOAD_ABORTED',
    );
  });

  it('throws RangeError and TypeError for invalid options (caller bugs)', async () => {
    const req = fakeRequest({}, 0);
    await expect(readUpload(req, { rawBodyByteLimit: -1 })).rejects.toThrow(RangeError);
    await expect(readUpload(req, { multipartByteLimit: 1.5 })).rejects.toThrow(RangeError);
    await expect(readUpload(req, { bodyFieldByteLimit: '1' as unknown as number })).rejects.toThrow(
      TypeError,
    );
    await expect(readUpload(req, { requireParts: ['x' as 'body'] })).rejects.toThrow(RangeError);
  });
});

describe('emptyStream', () => {
  it('S18: is an empty byte stream (not object mode) for a form without a stream part', async () => {
    const { emptyStream } = await import('../src/index.js');
    const stream = emptyStream();
    expect(stream.readableObjectMode).toBe(false);
    expect(await stream.toArray()).toEqual([]);
  });
});
