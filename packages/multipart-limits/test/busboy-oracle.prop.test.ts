// busboy as an independent oracle (ADR 0022): readUpload parses forms with its own scanner, and every form it
// accepts must read the same in busboy, a widely used parser — the same body text and the same stream bytes,
// whatever the chunking.
import { fc, test } from '@fast-check/vitest';
import busboy from 'busboy';
import { describe, expect, it } from 'vitest';
import { readUpload } from '../src/index.js';
import { BOUNDARY, bodyPart, buildForm, streamPart } from './helpers.js';
import { formToken, split } from './arbitraries.js';
import { fakeRequest, outcome } from './fake-request.js';

const HEADERS = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const OPTIONS = { multipartByteLimit: 4096, bodyFieldByteLimit: 1024 };
const RUNS = process.env['SLOW'] ? 2000 : 300;

interface Read {
  body?: string;
  stream?: string; // hex
}

async function ours(chunks: Buffer[]): Promise<Read | undefined> {
  try {
    const up = await readUpload(fakeRequest(HEADERS, chunks), OPTIONS);
    const parts: Buffer[] = [];
    if (up.stream) for await (const c of up.stream as AsyncIterable<Buffer>) parts.push(c);
    return {
      ...(up.body === undefined ? {} : { body: up.body }),
      ...(up.stream ? { stream: Buffer.concat(parts).toString('hex') } : {}),
    };
  } catch {
    return undefined; // refused: nothing to compare
  }
}

function theirs(chunks: Buffer[]): Promise<Read | { error: string }> {
  return new Promise((resolve) => {
    const read: Read = {};
    const bb = busboy({ headers: HEADERS, defParamCharset: 'utf8', defCharset: 'utf8' });
    bb.on('field', (name: string, value: string) => {
      if (name === 'body') read.body = value;
    });
    bb.on('file', (name: string, file: NodeJS.ReadableStream) => {
      const parts: Buffer[] = [];
      file.on('data', (d: Buffer) => parts.push(d));
      file.on('end', () => {
        if (name === 'stream') read.stream = Buffer.concat(parts).toString('hex');
      });
    });
    bb.on('close', () => resolve(read));
    bb.on('error', (e: Error) => resolve({ error: e.message }));
    for (const c of chunks) bb.write(c);
    bb.end();
  });
}

// Content that looks like framing: CR, LF, dashes and pieces of the delimiter, mixed with ordinary bytes.
const tricky = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        `--${BOUNDARY}`,
        '\r',
        '\n',
        '-',
        '--',
        '\r\n',
        `\r\n--${BOUNDARY.slice(0, 10)}`,
        `--${BOUNDARY}`.slice(0, -1),
        'x',
      ),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 24 },
  )
  .map((pieces) => pieces.join(''));

describe('every form readUpload accepts reads the same in busboy', () => {
  test.prop([tricky, fc.uint8Array({ maxLength: 300 }), tricky, fc.array(fc.nat(), { maxLength: 10 })], {
    numRuns: RUNS,
  })('body and stream parts with framing-like content, split anywhere', async (body, bytes, text, cuts) => {
    const stream = Buffer.concat([Buffer.from(bytes), Buffer.from(text, 'latin1')]);
    const form = buildForm([bodyPart(body), streamPart(stream)]);
    const chunks = split(form, cuts);
    const ourRead = await ours(chunks);
    if (ourRead === undefined) return;
    expect(await theirs(chunks)).toEqual(ourRead);
  });

  const token = formToken([
    'Content-Disposition: form-data; name="stream"; filename=""',
    'Content-Disposition: form-data; name="stream"; filename*=x',
    'Content-Disposition: form-data; name="stream"; filename*=UTF-8\'\'a%C3%AFb',
  ]);
  test.prop([fc.array(token, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 })], { numRuns: RUNS })(
    'token soups',
    async (tokens, cuts) => {
      const chunks = split(Buffer.from(tokens.join('')), cuts);
      const ourRead = await ours(chunks);
      if (ourRead === undefined) return;
      expect(await theirs(chunks)).toEqual(ourRead);
    },
  );
});

// Forms busboy reads differently from the guard's grammar; each is refused (found by review and by this oracle).
describe('forms two parsers would read differently are refused', () => {
  const cases: [string, Buffer, string][] = [
    [
      'body content starting with --boundary (busboy: one field swallowing the stream part)',
      buildForm([bodyPart(`--${BOUNDARY}`), streamPart('SECRET')]),
      'UPLOAD_MALFORMED',
    ],
    ['stream content starting with --boundary', buildForm([streamPart(`--${BOUNDARY}`)]), 'UPLOAD_MALFORMED'],
    [
      'an empty filename without a file type (busboy: a field)',
      buildForm([
        { headers: ['Content-Disposition: form-data; name="stream"; filename=""'], content: 'DATA' },
      ]),
      'UPLOAD_STREAM_MUST_BE_FILE',
    ],
    [
      'a filename* parameter (busboy drops a part it cannot decode)',
      buildForm([
        { headers: ['Content-Disposition: form-data; name="stream"; filename*=x'], content: 'DATA' },
      ]),
      'UPLOAD_MALFORMED',
    ],
  ];
  for (const [what, form, code] of cases) {
    it(what, async () => {
      for (const chunks of [[form], split(form, [1, 60, 61, 62, 140])]) {
        expect(await outcome(fakeRequest(HEADERS, chunks), OPTIONS)).toEqual({ code });
      }
    });
  }
});
