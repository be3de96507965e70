import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { fc, test } from '@fast-check/vitest';
import { chunked, loadNegativeCorpus } from '@org/test-utils';
import { describe, expect, it } from 'vitest';
import { CORPUS_OPTIONS, NEGATIVE_DIR } from '../testdata/generate.js';
import {
  isUploadError,
  parseUploadBuffer,
  readUpload,
  readUploadBuffered,
  type ReadUploadOptions,
} from '../src/index.js';
import { formToken } from './arbitraries.js';
import { fakeRequest, type Outcome } from './fake-request.js';
import { BOUNDARY, bodyPart, buildForm, streamPart } from './helpers.js';

const HEADERS = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const OPTIONS = {
  multipartByteLimit: 256,
  bodyFieldByteLimit: 64,
  requireParts: ['body', 'stream'] as const,
};
const RUNS = process.env['SLOW'] ? 2000 : 60;

/** An outcome with the error's message and details too, so both readers are compared on all of it. */
type Detailed = Outcome | { code: string; message: string; details: unknown };

function errorOutcome(err: unknown): Detailed {
  if (!isUploadError(err)) throw err;
  return { code: err.code, message: err.message, details: err.details };
}

function summary(kind: string, body: string | undefined, stream: Buffer | undefined): Detailed {
  const sha = stream === undefined ? {} : { sha: createHash('sha256').update(stream).digest('hex') };
  return { ok: { kind, body, bytes: stream?.length ?? 0, ...sha } };
}

/** The streaming reader fed `bytes` in one chunk, stream read to its end. */
async function streamed(
  headers: Record<string, string>,
  bytes: Buffer,
  o: ReadUploadOptions,
): Promise<Detailed> {
  try {
    const up = await readUpload(fakeRequest(headers, [bytes]), o);
    const chunks: Buffer[] = [];
    if (up.stream) for await (const c of up.stream as AsyncIterable<Buffer>) chunks.push(c);
    return summary(up.kind, up.body, up.stream ? Buffer.concat(chunks) : undefined);
  } catch (err) {
    return errorOutcome(err);
  }
}

function parsed(headers: IncomingHttpHeaders, bytes: Buffer, o: ReadUploadOptions): Detailed {
  try {
    const up = parseUploadBuffer(headers, bytes, o);
    return summary(up.kind, up.body, up.stream);
  } catch (err) {
    return errorOutcome(err);
  }
}

async function buffered(req: IncomingMessage, o: ReadUploadOptions): Promise<Detailed> {
  try {
    const up = await readUploadBuffered(req, o);
    return summary(up.kind, up.body, up.stream);
  } catch (err) {
    return errorOutcome(err);
  }
}

/**
 * The same outcome without the message, which may differ for UPLOAD_MALFORMED: in the streaming reader busboy
 * sometimes reports a malformed form before the guard does (same code).
 */
function codeOnly(d: Detailed): Detailed {
  if (!('message' in d)) return d;
  const { message: _message, ...rest } = d;
  return rest;
}

/**
 * Both buffered functions agree with the streaming reader on `bytes` (whole, and for the reader chunked): the
 * same result, or the same code and details (and message, with `sameMessage`).
 */
async function expectSameAsStreaming(
  headers: Record<string, string>,
  bytes: Buffer,
  o: ReadUploadOptions,
  sameMessage = false,
): Promise<Detailed> {
  const view = sameMessage ? (d: Detailed) => d : codeOnly;
  const expected = await streamed(headers, bytes, o);
  const copy = Buffer.from(bytes);
  expect(view(parsed(headers, bytes, o))).toEqual(view(expected));
  expect(bytes.equals(copy)).toBe(true); // parseUploadBuffer only reads its input
  expect(view(await buffered(fakeRequest(headers, [...chunked(bytes, 7)]), o))).toEqual(view(expected));
  return expected;
}

describe('parseUploadBuffer and readUploadBuffered', () => {
  it.each(loadNegativeCorpus(NEGATIVE_DIR).map((v) => [v.file, v] as const))(
    'corpus %s: the same code, message and details as readUpload',
    async (_f, v) => {
      const result = await expectSameAsStreaming(HEADERS, Buffer.from(v.bytes), CORPUS_OPTIONS, true);
      expect(result).toMatchObject({ code: v.code });
    },
  );

  it('returns the body part and the stream part exactly', async () => {
    const stream = Buffer.from([0, 1, 2, 13, 10, 45, 45, 255]);
    const form = buildForm([bodyPart('{"a":"é"}'), streamPart(stream)]);
    await expectSameAsStreaming(HEADERS, form, OPTIONS, true);
    const up = parseUploadBuffer(HEADERS, form, OPTIONS);
    expect(up).toEqual({ kind: 'multipart', body: '{"a":"é"}', stream, streamFilename: 'stream.bin' });
    const star = buildForm([
      bodyPart('{}'),
      {
        headers: ['Content-Disposition: form-data; name="stream"; filename*=UTF-8\'\'%C3%A9.bin'],
        content: 'x',
      },
    ]);
    expect(parseUploadBuffer(HEADERS, star, OPTIONS).streamFilename).toBe('é.bin');
    form.fill(0); // the stream part is a copy, not a view of the input
    expect(up.stream).toEqual(stream);
  });

  it('applies the stream cap exactly: L passes, L + 1 is UPLOAD_FILE_TOO_LARGE', async () => {
    const ok = buildForm([bodyPart('{}'), streamPart(Buffer.alloc(256, 7))]);
    expect(parseUploadBuffer(HEADERS, ok, OPTIONS).stream!.length).toBe(256);
    const over = buildForm([bodyPart('{}'), streamPart(Buffer.alloc(257, 7))]);
    expect(await expectSameAsStreaming(HEADERS, over, OPTIONS)).toMatchObject({
      code: 'UPLOAD_FILE_TOO_LARGE',
    });
  });

  it('refuses a stream part without the required body part, and a form without a stream part', async () => {
    const noBody = buildForm([streamPart('x')]);
    expect(await expectSameAsStreaming(HEADERS, noBody, OPTIONS)).toMatchObject({
      code: 'UPLOAD_MISSING_PART',
      details: { parts: ['body'] },
    });
    const noStream = buildForm([bodyPart('{}')]);
    expect(await expectSameAsStreaming(HEADERS, noStream, OPTIONS)).toMatchObject({
      code: 'UPLOAD_MISSING_PART',
      details: { parts: ['stream'] },
    });
    expect(await expectSameAsStreaming(HEADERS, noStream, { multipartByteLimit: 8 })).toMatchObject({
      ok: { kind: 'multipart', body: '{}', bytes: 0 },
    });
  });

  it('reports the first defect in byte order, as readUpload does, on a form that also ends too early', async () => {
    // Found by the token property below (fast-check seed -1063497842): a stream part without the required
    // body part, never closed, was UPLOAD_MALFORMED here and UPLOAD_MISSING_PART in readUpload.
    const tokens = [
      `--${BOUNDARY}`,
      '\r\n',
      'Content-Disposition: form-data; name="stream"; filename="a"',
      '\r\n\r\n',
    ];
    expect(await expectSameAsStreaming(HEADERS, Buffer.from(tokens.join('')), OPTIONS, true)).toMatchObject({
      code: 'UPLOAD_MISSING_PART',
      details: { parts: ['body'] },
    });
    // The same rule for the stream cap: past L, then cut before the closing delimiter.
    const over = buildForm([bodyPart('{}'), streamPart(Buffer.alloc(400, 7))]);
    expect(
      await expectSameAsStreaming(HEADERS, over.subarray(0, over.length - 20), OPTIONS, true),
    ).toMatchObject({ code: 'UPLOAD_FILE_TOO_LARGE' });
    // Within L and cut: the missing closing delimiter.
    const within = buildForm([bodyPart('{}'), streamPart(Buffer.alloc(100, 7))]);
    expect(
      await expectSameAsStreaming(HEADERS, within.subarray(0, within.length - 20), OPTIONS, true),
    ).toMatchObject({ code: 'UPLOAD_MALFORMED' });
  });

  it('judges the headers first: declared length, media type, multipart not enabled', () => {
    const form = buildForm([bodyPart('{}'), streamPart('x')]);
    const declared = { ...HEADERS, 'content-length': String(256 + 64 + 64 * 1024 + 1) };
    expect(parsed(declared, form, OPTIONS)).toMatchObject({ code: 'UPLOAD_REQUEST_TOO_LARGE' });
    expect(parsed({ 'content-type': 'image/png' }, form, OPTIONS)).toMatchObject({
      code: 'UPLOAD_UNSUPPORTED_MEDIA_TYPE',
    });
    expect(parsed(HEADERS, form, {})).toMatchObject({ code: 'UPLOAD_NOT_MULTIPART' });
    expect(parsed({ ...HEADERS, 'content-encoding': 'gzip' }, form, OPTIONS)).toMatchObject({
      code: 'UPLOAD_CONTENT_ENCODING',
    });
  });

  it('reads json, text and octet bodies with the raw body cap', async () => {
    const o = { rawBodyByteLimit: 8 };
    const json = { 'content-type': 'application/json' };
    const octet = { 'content-type': 'application/octet-stream' };
    expect(await expectSameAsStreaming(json, Buffer.from('{"a":1}'), o)).toMatchObject({
      ok: { kind: 'json', body: '{"a":1}' },
    });
    expect(await expectSameAsStreaming(json, Buffer.from('{"a":100}'), o)).toMatchObject({
      code: 'UPLOAD_BODY_TOO_LARGE',
    });
    expect(
      await expectSameAsStreaming({ 'content-type': 'text/plain' }, Buffer.from([0xc3, 0x28]), o),
    ).toMatchObject({ code: 'UPLOAD_BODY_NOT_UTF8' });
    expect(await expectSameAsStreaming(octet, Buffer.from([1, 2, 3]), o)).toMatchObject({
      ok: { kind: 'octet', bytes: 3 },
    });
    expect(await expectSameAsStreaming(octet, Buffer.alloc(9), o)).toMatchObject({
      code: 'UPLOAD_BODY_TOO_LARGE',
    });
    expect(parsed({}, Buffer.alloc(0), o)).toEqual({ ok: { kind: 'empty', body: undefined, bytes: 0 } });
  });

  it('readUploadBuffered stops at the first byte past the request cap of a body without Content-Length', async () => {
    let pulled = 0;
    const req = Readable.from(
      (function* () {
        for (;;) {
          pulled++;
          yield Buffer.alloc(1024, 0x61);
        }
      })(),
      { objectMode: false },
    ) as unknown as IncomingMessage;
    Object.assign(req, { headers: { ...HEADERS, 'transfer-encoding': 'chunked' }, complete: false });
    expect(await buffered(req, OPTIONS)).toMatchObject({ code: 'UPLOAD_REQUEST_TOO_LARGE' });
    // The cap is 256 + 64 + 64 KiB: reading stopped right after the chunk that crossed it (plus read-ahead).
    expect(pulled).toBeLessThan(70 + 20);
    expect(req.listenerCount('data') + req.listenerCount('end') + req.listenerCount('close')).toBe(0);
  });

  it('readUploadBuffered rejects with UPLOAD_ABORTED when the request errors or closes early', async () => {
    const req = fakeRequest(HEADERS, []);
    const pending = buffered(req, OPTIONS);
    req.destroy(new Error('socket hang up'));
    expect(await pending).toMatchObject({ code: 'UPLOAD_ABORTED' });
    const controller = new AbortController();
    const form = buildForm([bodyPart('{}'), streamPart('x')]);
    controller.abort();
    expect(
      await buffered(fakeRequest(HEADERS, [form]), { ...OPTIONS, signal: controller.signal }),
    ).toMatchObject({
      code: 'UPLOAD_ABORTED',
    });
  });

  const validForm = fc
    .tuple(fc.string({ maxLength: 64 }), fc.uint8Array({ maxLength: 300 }))
    .map(([body, stream]) => buildForm([bodyPart(body), streamPart(stream)]));

  test.prop([fc.uint8Array({ maxLength: 600 })], { numRuns: RUNS })(
    'any byte garbage: the same outcome as readUpload fed it whole',
    async (garbage) => {
      await expectSameAsStreaming(HEADERS, Buffer.from(garbage), OPTIONS);
    },
  );

  test.prop([validForm, fc.nat(), fc.integer({ min: 0, max: 255 })], { numRuns: RUNS })(
    'a valid form, flipped at any byte or truncated: the same outcome as readUpload fed it whole',
    async (form, at, value) => {
      await expectSameAsStreaming(HEADERS, form, OPTIONS);
      const flipped = Buffer.from(form);
      flipped[at % form.length] = value;
      await expectSameAsStreaming(HEADERS, flipped, OPTIONS);
      await expectSameAsStreaming(HEADERS, form.subarray(0, at % form.length), OPTIONS);
    },
  );

  const token = formToken(['Content-Transfer-Encoding: base64']);
  test.prop([fc.array(token, { maxLength: 40 })], { numRuns: RUNS * 4 })(
    'any sequence of multipart tokens: the same outcome as readUpload fed it whole',
    async (tokens) => {
      await expectSameAsStreaming(HEADERS, Buffer.from(tokens.join('')), OPTIONS);
      await expectSameAsStreaming(HEADERS, Buffer.from(tokens.join('')), CORPUS_OPTIONS);
    },
  );
});
