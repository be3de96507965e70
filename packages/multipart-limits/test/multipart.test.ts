import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import {
  BOUNDARY,
  bodyPart,
  buildForm,
  chunkedEncoding,
  generated,
  multipartHead,
  post,
  postForm,
  rawExchange,
  sha256,
  startServer,
  stillServes,
  streamPart,
} from './helpers.js';
import type { TestServer } from './helpers.js';
import { readUpload } from '../src/index.js';

const L = 64 * 1024; // the step's multiPartUploadByteLimit
const FIELD_CAP = 4096;
const BODY = '{"packageId":"invoice-uploader","signText":"é ✓"}';

let agent: TestServer; // an agent trigger: either part may come alone
let packager: TestServer; // the packager: both parts required
let noLimit: TestServer; // a step without multiPartUploadByteLimit

beforeAll(async () => {
  agent = await startServer({ multipartByteLimit: L, bodyFieldByteLimit: FIELD_CAP });
  packager = await startServer({
    multipartByteLimit: L,
    bodyFieldByteLimit: FIELD_CAP,
    requireParts: ['body', 'stream'],
  });
  noLimit = await startServer({});
});
afterAll(async () => {
  await Promise.all([agent.close(), packager.close(), noLimit.close()]);
});

/** Posts a hand-built form and checks the code, then that the same server still answers. */
async function expectRefused(server: TestServer, form: Buffer, status: number, code: string): Promise<void> {
  const res = await postForm(server.url, form);
  expect(res).toEqual({ status, json: { code } });
  expect(await stillServes(server.url)).toBe(true);
}

describe('readUpload: multipart accepted', () => {
  it('S13: accepts body plus a stream of exactly L bytes; stream SHA-256 and body are exact', async () => {
    const bytes = Buffer.concat([...generated(L, 1000)]);
    const fd = new FormData();
    fd.append('body', BODY);
    fd.append('stream', new Blob([bytes], { type: 'application/octet-stream' }), 'workflow.json');
    const res = await post(packager.url, fd);
    expect(res).toEqual({
      status: 200,
      json: { kind: 'multipart', body: BODY, bytes: L, sha: sha256(bytes), filename: 'workflow.json' },
    });
  });

  it('S13: accepts the boundary case through a raw socket too (limit counts stream content bytes only)', async () => {
    const bytes = Buffer.concat([...generated(L, 777)]);
    const form = buildForm([bodyPart('x'.repeat(FIELD_CAP)), streamPart(bytes)]);
    const answer = await rawExchange(agent.port, multipartHead(form.length), [form]);
    expect(answer?.status).toBe(200);
    expect(JSON.parse(answer!.body)).toMatchObject({ bytes: L, sha: sha256(bytes) });
  });

  it('S18: accepts body alone at an agent trigger, with no stream (the app hands the step an empty reader)', async () => {
    const res = await postForm(agent.url, buildForm([bodyPart(BODY)]));
    expect(res).toEqual({ status: 200, json: { kind: 'multipart', body: BODY, bytes: 0 } });
    const streamOnly = await postForm(agent.url, buildForm([streamPart('abc')]));
    expect(streamOnly.json).toMatchObject({ kind: 'multipart', bytes: 3, sha: sha256(Buffer.from('abc')) });
    expect(streamOnly.json.body).toBeUndefined();
  });

  it('accepts an empty stream part, a body of exactly the field cap, and a stream with a text type and filename', async () => {
    const form = buildForm([bodyPart('é'.repeat(FIELD_CAP / 2)), { ...streamPart(''), type: 'text/csv' }]);
    const res = await postForm(agent.url, form);
    expect(res.json).toMatchObject({ body: 'é'.repeat(FIELD_CAP / 2), bytes: 0 });
  });

  // Regression: a stream part named only by filename* (RFC 8187 / RFC 6266) was refused as malformed.
  it("accepts a stream part named only by filename*=UTF-8''… and keeps the decoded name", async () => {
    const head = (params: string) => ({
      headers: [`Content-Disposition: form-data; name="stream"; ${params}`],
      content: 'abc',
    });
    const star = await postForm(
      agent.url,
      buildForm([bodyPart('{}'), head("filename*=UTF-8''na%C3%AFve%20%E2%9C%93.bin")]),
    );
    expect(star).toEqual({
      status: 200,
      json: {
        kind: 'multipart',
        body: '{}',
        bytes: 3,
        sha: sha256(Buffer.from('abc')),
        filename: 'naïve ✓.bin',
      },
    });
    const lang = await postForm(agent.url, buildForm([head("filename*=utf-8'en'a.csv")]));
    expect(lang.json).toMatchObject({ bytes: 3, filename: 'a.csv' });
    const plain = await postForm(agent.url, buildForm([head('filename="plain name.bin"')]));
    expect(plain.json).toMatchObject({ bytes: 3, filename: 'plain name.bin' });
  });

  it.each([
    ['a bad percent-escape', "filename*=UTF-8''a%2"],
    ['a non-hex escape', "filename*=UTF-8''a%zz"],
    ['a control character', "filename*=UTF-8''a%0Ab"],
    ['DEL', "filename*=UTF-8''a%7F"],
    ['a C1 control', "filename*=UTF-8''a%C2%85"],
    ['invalid UTF-8', "filename*=UTF-8''%C3%28"],
    ['another charset', "filename*=ISO-8859-1''%E9"],
    ['no charset', "filename*=''a"],
    ['a raw space', 'filename*="UTF-8\'\'a b"'],
    ['both filename and filename*', 'filename="a"; filename*=UTF-8\'\'b'],
  ])('refuses a filename* with %s as UPLOAD_MALFORMED', async (_what, params) => {
    const form = buildForm([
      { headers: [`Content-Disposition: form-data; name="stream"; ${params}`], content: 'abc' },
    ]);
    await expectRefused(agent, form, 400, 'UPLOAD_MALFORMED');
  });

  it('accepts a quoted boundary with a space and a body that starts with no preamble', async () => {
    const boundary = 'a b(c)d';
    const form = buildForm([bodyPart('{}')], { boundary });
    const res = await post(agent.url, form, {
      'content-type': `multipart/form-data; boundary="${boundary}"`,
    });
    expect(res.json).toMatchObject({ body: '{}' });
  });
});

describe('readUpload: multipart refused', () => {
  it('S12: refuses multipart at a step without multiPartUploadByteLimit with UPLOAD_NOT_MULTIPART', async () => {
    await expectRefused(noLimit, buildForm([bodyPart(BODY)]), 415, 'UPLOAD_NOT_MULTIPART');
  });

  it('S14: refuses a stream of L+1 bytes with UPLOAD_FILE_TOO_LARGE', async () => {
    const bytes = Buffer.concat([...generated(L + 1, 1000)]);
    await expectRefused(agent, buildForm([bodyPart(BODY), streamPart(bytes)]), 413, 'UPLOAD_FILE_TOO_LARGE');
    await expectRefused(agent, buildForm([streamPart(bytes)]), 413, 'UPLOAD_FILE_TOO_LARGE');
  });

  it('S14: refuses a declared Content-Length above L + body cap + overhead with UPLOAD_REQUEST_TOO_LARGE before reading', async () => {
    const answer = await rawExchange(agent.port, multipartHead(L + FIELD_CAP + 64 * 1024 + 1));
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer!.body)).toEqual({ code: 'UPLOAD_REQUEST_TOO_LARGE' });
  });

  it('S15: refuses a 2 MiB stream sent as a plain text field with UPLOAD_STREAM_MUST_BE_FILE, never cut short', async () => {
    const form = buildForm([bodyPart(BODY), { name: 'stream', content: 'a'.repeat(2 * 1024 * 1024) }]);
    const big = await startServer({ multipartByteLimit: 4 * 1024 * 1024 });
    try {
      await expectRefused(big, form, 400, 'UPLOAD_STREAM_MUST_BE_FILE');
    } finally {
      await big.close();
    }
  });

  it('S16: refuses body sent as a file part with UPLOAD_BODY_MUST_BE_FIELD', async () => {
    const form = buildForm([{ name: 'body', filename: 'body.json', content: BODY }]);
    await expectRefused(agent, form, 400, 'UPLOAD_BODY_MUST_BE_FIELD');
    const octet = buildForm([{ name: 'body', type: 'application/octet-stream', content: BODY }]);
    await expectRefused(agent, octet, 400, 'UPLOAD_BODY_MUST_BE_FIELD');
  });

  it('S17: refuses a body one byte over the field cap with UPLOAD_FIELD_TOO_LARGE, never cut short', async () => {
    await expectRefused(
      agent,
      buildForm([bodyPart('x'.repeat(FIELD_CAP + 1))]),
      413,
      'UPLOAD_FIELD_TOO_LARGE',
    );
    const withStream = buildForm([bodyPart('é'.repeat(FIELD_CAP)), streamPart('abc')]);
    await expectRefused(agent, withStream, 413, 'UPLOAD_FIELD_TOO_LARGE');
  });

  it('S18: refuses a packager form with body but no stream with UPLOAD_MISSING_PART naming stream', async () => {
    await expectRefused(packager, buildForm([bodyPart(BODY)]), 400, 'UPLOAD_MISSING_PART');
    const missing = packager.errors.at(-1) as { details: unknown; message: string };
    expect(missing.details).toEqual({ parts: ['stream'] });
    expect(missing.message).toContain('stream');
    await expectRefused(packager, buildForm([streamPart('abc')]), 400, 'UPLOAD_MISSING_PART');
    expect((packager.errors.at(-1) as { details: unknown }).details).toEqual({ parts: ['body'] });
    await expectRefused(agent, buildForm([]), 400, 'UPLOAD_MISSING_PART');
  });

  it('S19: refuses two stream parts with UPLOAD_DUPLICATE_PART; the second is not skipped', async () => {
    await expectRefused(agent, buildForm([streamPart('a'), streamPart('b')]), 400, 'UPLOAD_DUPLICATE_PART');
    await expectRefused(agent, buildForm([bodyPart('1'), bodyPart('2')]), 400, 'UPLOAD_DUPLICATE_PART');
  });

  it('S20: refuses a part with name="" with UPLOAD_UNKNOWN_PART; no crash', async () => {
    await expectRefused(agent, buildForm([{ name: '', content: 'x' }]), 400, 'UPLOAD_UNKNOWN_PART');
    const noName = buildForm([{ headers: ['Content-Disposition: form-data'], content: 'x' }]);
    await expectRefused(agent, noName, 400, 'UPLOAD_UNKNOWN_PART');
  });

  it('refuses __proto__, constructor, Body and other unknown names with UPLOAD_UNKNOWN_PART; no pollution', async () => {
    for (const name of ['__proto__', 'constructor', 'prototype', 'Body', 'stream ', 'extra']) {
      await expectRefused(
        agent,
        buildForm([{ name, content: '{"polluted":true}' }]),
        400,
        'UPLOAD_UNKNOWN_PART',
      );
    }
    await expectRefused(
      agent,
      buildForm([bodyPart(BODY), streamPart('x'), { name: 'extra', content: 'x' }]),
      400,
      'UPLOAD_UNKNOWN_PART',
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const message = (agent.errors.at(-2) as Error).message;
    expect(message).toContain('"extra"');
  });

  it('refuses a body part after the stream part with UPLOAD_PART_ORDER', async () => {
    await expectRefused(agent, buildForm([streamPart('abc'), bodyPart(BODY)]), 400, 'UPLOAD_PART_ORDER');
  });

  it('S21: refuses a body ending inside the stream part without a closing delimiter with UPLOAD_MALFORMED', async () => {
    const full = buildForm([bodyPart(BODY), streamPart(Buffer.concat([...generated(10_000)]))]);
    const cut = full.subarray(0, full.length - 5000);
    await expectRefused(agent, cut, 400, 'UPLOAD_MALFORMED');
    await expectRefused(agent, buildForm([bodyPart(BODY)], { close: false }), 400, 'UPLOAD_MALFORMED');
  });

  it('S22: refuses a part header line starting with a space (header folding) with UPLOAD_MALFORMED; no crash', async () => {
    const folded = buildForm([{ headers: [' Content-Disposition: form-data; name="body"'], content: 'x' }]);
    await expectRefused(agent, folded, 400, 'UPLOAD_MALFORMED');
    const continued = buildForm([
      { headers: ['Content-Disposition: form-data;', ' name="body"'], content: 'x' },
    ]);
    await expectRefused(agent, continued, 400, 'UPLOAD_MALFORMED');
  });

  it('S23: refuses 10 000 tiny parts with UPLOAD_UNKNOWN_PART when the third part starts, in bounded time', async () => {
    const tiny = Array.from({ length: 9_998 }, () => ({ name: 'x', content: 'y' }));
    const parts = [bodyPart('y'), streamPart('y'), ...tiny];
    const form = buildForm(parts);
    const started = performance.now();
    // Chunked, so no declared length refuses it first (with a Content-Length it is UPLOAD_REQUEST_TOO_LARGE).
    const answer = await rawExchange(agent.port, multipartHead(undefined), chunkedEncoding([form]));
    expect(answer?.status).toBe(400);
    expect(JSON.parse(answer!.body)).toEqual({ code: 'UPLOAD_UNKNOWN_PART' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(await postForm(agent.url, form)).toEqual({
      status: 413,
      json: { code: 'UPLOAD_REQUEST_TOO_LARGE' },
    });
    // Parts without a content-disposition are still counted (busboy would skip them silently).
    const anonymous = buildForm(Array.from({ length: 3 }, () => ({ headers: ['X-A: b'], content: 'y' })));
    await expectRefused(agent, anonymous, 400, 'UPLOAD_MALFORMED');
    const third = buildForm([bodyPart('1'), streamPart('2'), { headers: ['X-A: b'], content: 'y' }]);
    await expectRefused(agent, third, 400, 'UPLOAD_UNKNOWN_PART');
  });

  it('S24: refuses no boundary, boundary= and a 71-character boundary with UPLOAD_BAD_BOUNDARY', async () => {
    const form = buildForm([bodyPart(BODY)]);
    for (const type of [
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary=""',
      `multipart/form-data; boundary=${'b'.repeat(71)}`,
      'multipart/form-data; boundary="a\\b"',
      'multipart/form-data; boundary="ab "',
      'multipart/form-data; boundary=a; boundary=b',
    ]) {
      const res = await post(agent.url, form, { 'content-type': type });
      expect.soft(res, type).toEqual({ status: 400, json: { code: 'UPLOAD_BAD_BOUNDARY' } });
    }
    const ok = buildForm([bodyPart(BODY)], { boundary: 'b'.repeat(70) });
    const res = await post(agent.url, ok, {
      'content-type': `multipart/form-data; boundary=${'b'.repeat(70)}`,
    });
    expect(res.status).toBe(200);
    expect(await stillServes(agent.url)).toBe(true);
  });

  it('refuses an oversized part header block with UPLOAD_HEADERS_LIMIT and too many header lines likewise', async () => {
    const long = buildForm([
      {
        headers: ['Content-Disposition: form-data; name="body"', `X-Pad: ${'p'.repeat(9000)}`],
        content: 'x',
      },
    ]);
    await expectRefused(agent, long, 413, 'UPLOAD_HEADERS_LIMIT');
    const many = buildForm([
      {
        headers: [
          'Content-Disposition: form-data; name="body"',
          ...Array.from({ length: 20 }, (_, i) => `X-${i}: 1`),
        ],
        content: 'x',
      },
    ]);
    await expectRefused(agent, many, 413, 'UPLOAD_HEADERS_LIMIT');
  });

  it('refuses a part content-transfer-encoding with UPLOAD_CONTENT_ENCODING and a non-utf-8 body with the right codes', async () => {
    const b64 = buildForm([
      {
        headers: [
          'Content-Disposition: form-data; name="stream"; filename="a"',
          'Content-Transfer-Encoding: base64',
        ],
        content: 'YQ==',
      },
    ]);
    await expectRefused(agent, b64, 415, 'UPLOAD_CONTENT_ENCODING');
    const latin = buildForm([{ name: 'body', type: 'text/plain; charset=iso-8859-1', content: 'x' }]);
    await expectRefused(agent, latin, 415, 'UPLOAD_UNSUPPORTED_MEDIA_TYPE');
    const bad = buildForm([bodyPart(new Uint8Array([0x7b, 0xc3, 0x28, 0x7d]))]);
    await expectRefused(agent, bad, 400, 'UPLOAD_BODY_NOT_UTF8');
  });

  it('refuses junk after a delimiter, a delimiter inside headers and duplicate part headers with UPLOAD_MALFORMED', async () => {
    const form = buildForm([bodyPart(BODY)]);
    const padded = Buffer.from(
      form.toString('latin1').replace('--\r\n', '--  ').replace(`${'\r\n'}Content`, '  \r\nContent'),
      'latin1',
    );
    await expectRefused(agent, padded, 400, 'UPLOAD_MALFORMED');
    const dup = buildForm([
      {
        headers: [
          'Content-Disposition: form-data; name="body"',
          'content-disposition: form-data; name="stream"',
        ],
        content: 'x',
      },
    ]);
    await expectRefused(agent, dup, 400, 'UPLOAD_MALFORMED');
    const notForm = buildForm([{ headers: ['Content-Disposition: attachment; name="body"'], content: 'x' }]);
    await expectRefused(agent, notForm, 400, 'UPLOAD_MALFORMED');
  });

  it('refuses a quoted part name with a backslash escape, which busboy reads differently, with UPLOAD_MALFORMED', async () => {
    const escaped = buildForm([{ headers: ['Content-Disposition: form-data; name="bo\\dy"'], content: 'x' }]);
    await expectRefused(agent, escaped, 400, 'UPLOAD_MALFORMED');
  });

  it('refuses a chunked request once its counted bytes pass L + body cap + overhead with UPLOAD_REQUEST_TOO_LARGE', async () => {
    const junk = Buffer.alloc(L + FIELD_CAP + 64 * 1024 + 1, 0x61); // a preamble that never ends
    const answer = await rawExchange(agent.port, multipartHead(undefined), chunkedEncoding([junk]));
    expect(answer?.status).toBe(413);
    expect(JSON.parse(answer!.body)).toEqual({ code: 'UPLOAD_REQUEST_TOO_LARGE' });
    expect(await stillServes(agent.url)).toBe(true);
  });
});

describe('readUpload: what the stream chunks hold', () => {
  it('gives every stream chunk an ArrayBuffer of its own (whole request chunks as views, other bytes copied unpooled)', async () => {
    const content = Buffer.alloc(200 * 1024);
    for (let i = 0; i < content.length; i++) content[i] = (i * 7) % 253;
    const form = buildForm([bodyPart(BODY), streamPart(content)]);
    // Request chunks of every kind: ones spanning their whole ArrayBuffer, pooled slices (small Buffer.from
    // copies), and ones shorter than a delimiter, which the scanner joins to its carry.
    const feed: Buffer[] = [];
    for (let at = 0, i = 0; at < form.length; i++) {
      const size = [5, 3000, 70 * 1024, 17, 64 * 1024][i % 5]!;
      const piece = form.subarray(at, at + size);
      feed.push(size >= 4096 ? Buffer.concat([piece], piece.length) : Buffer.from(piece));
      at += size;
    }
    const wholeBuffers = new Set(
      feed.filter((c) => c.byteLength === c.buffer.byteLength).map((c) => c.buffer),
    );
    const req = Readable.from(feed, { objectMode: false }) as unknown as IncomingMessage;
    Object.assign(req, {
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      complete: false,
    });
    req.once('end', () => Object.assign(req, { complete: true }));
    const up = await readUpload(req, { multipartByteLimit: 1024 * 1024, bodyFieldByteLimit: FIELD_CAP });
    const chunks: Buffer[] = [];
    up.stream!.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((r) => up.stream!.once('end', r));
    expect(Buffer.concat(chunks).equals(content)).toBe(true);
    expect(new Set(chunks.map((c) => c.buffer)).size).toBe(chunks.length);
    for (const c of chunks)
      expect(wholeBuffers.has(c.buffer) || c.buffer.byteLength === c.byteLength).toBe(true);
    expect(chunks.some((c) => wholeBuffers.has(c.buffer))).toBe(true);
  });
});
