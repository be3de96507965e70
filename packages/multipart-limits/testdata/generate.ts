/**
 * Writes the named negative corpus `testdata/negative/<CODE>--<defect>.multipart` (docs/engineering.md §3). Each file is
 * a multipart/form-data body with boundary `BOUNDARY` and one defect, read with `CORPUS_OPTIONS`.
 * Regenerate: `pnpm exec tsx packages/multipart-limits/testdata/generate.ts`. Never edit the files by hand;
 * test/vectors.test.ts fails when they differ from what this script produces.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BOUNDARY, bodyPart, buildForm, streamPart } from '../test/helpers.js';

/** The options every corpus file is read with. */
export const CORPUS_OPTIONS = { multipartByteLimit: 64, bodyFieldByteLimit: 32 };

const field = (name: string, content = 'x') => ({ name, content });
const disp = (extra: string) => `Content-Disposition: form-data; name="body"${extra}`;
const streamHead = (params: string) => ({
  headers: [`Content-Disposition: form-data; name="stream"; ${params}`],
  content: 's',
});

/** File name → bytes. */
export function corpus(): Map<string, Buffer> {
  const entries: [string, Buffer][] = [
    ['UPLOAD_UNKNOWN_PART--proto-name', buildForm([field('__proto__', '{"polluted":1}')])],
    ['UPLOAD_UNKNOWN_PART--constructor-name', buildForm([field('constructor')])],
    ['UPLOAD_UNKNOWN_PART--empty-name', buildForm([field('')])],
    ['UPLOAD_UNKNOWN_PART--missing-name', buildForm([{ headers: ['Content-Disposition: form-data'], content: 'x' }])],
    ['UPLOAD_DUPLICATE_PART--two-streams', buildForm([streamPart('a'), streamPart('b')])],
    ['UPLOAD_DUPLICATE_PART--two-bodies', buildForm([bodyPart('a'), bodyPart('b')])],
    ['UPLOAD_STREAM_MUST_BE_FILE--stream-as-field', buildForm([field('stream', 'abc')])],
    ['UPLOAD_BODY_MUST_BE_FIELD--body-with-filename', buildForm([{ name: 'body', filename: 'b', content: 'x' }])],
    ['UPLOAD_FIELD_TOO_LARGE--body-one-over', buildForm([bodyPart('x'.repeat(33))])],
    ['UPLOAD_FILE_TOO_LARGE--stream-one-over', buildForm([streamPart('s'.repeat(65))])],
    ['UPLOAD_UNKNOWN_PART--third-part', buildForm([bodyPart('a'), streamPart('b'), field('extra')])],
    ['UPLOAD_UNKNOWN_PART--third-part-named-body', buildForm([bodyPart('a'), streamPart('b'), field('body')])],
    ['UPLOAD_HEADERS_LIMIT--long-header', buildForm([{ headers: [disp(''), `X-P: ${'p'.repeat(8200)}`], content: 'x' }])],
    ['UPLOAD_HEADERS_LIMIT--many-lines', buildForm([{ headers: [disp(''), ...Array(16).fill('X: 1')], content: 'x' }])],
    ['UPLOAD_MALFORMED--folded-header', buildForm([{ headers: [' ' + disp('')], content: 'x' }])],
    ['UPLOAD_MALFORMED--no-closing-delimiter', buildForm([bodyPart('a')], { close: false })],
    ['UPLOAD_MALFORMED--cut-inside-stream', buildForm([streamPart('s'.repeat(40))]).subarray(0, -30)],
    ['UPLOAD_MALFORMED--no-disposition', buildForm([{ headers: ['X-A: b'], content: 'x' }])],
    ['UPLOAD_MALFORMED--empty-header-block', Buffer.from(`--${BOUNDARY}\r\n\r\nx\r\n--${BOUNDARY}--\r\n`)],
    ['UPLOAD_MALFORMED--padding-after-delimiter', Buffer.from(`--${BOUNDARY} \r\n${disp('')}\r\n\r\nx\r\n--${BOUNDARY}--`)],
    ['UPLOAD_MALFORMED--delimiter-in-epilogue', Buffer.concat([buildForm([bodyPart('a')]), Buffer.from(`\r\n--${BOUNDARY}\r\n\r\n`)])],
    ['UPLOAD_MALFORMED--nul-in-header', buildForm([{ headers: [disp('\u0000')], content: 'x' }])],
    ['UPLOAD_MALFORMED--duplicate-disposition', buildForm([{ headers: [disp(''), disp('')], content: 'x' }])],
    ['UPLOAD_MALFORMED--filename-star-bad-escape', buildForm([streamHead("filename*=UTF-8''a%2")])],
    ['UPLOAD_MALFORMED--filename-star-control-char', buildForm([streamHead("filename*=UTF-8''a%0Ab")])],
    ['UPLOAD_MALFORMED--filename-star-not-utf8', buildForm([streamHead("filename*=UTF-8''%C3%28")])],
    ['UPLOAD_MALFORMED--filename-star-latin1-charset', buildForm([streamHead("filename*=ISO-8859-1''%E9")])],
    ['UPLOAD_MALFORMED--filename-and-filename-star', buildForm([streamHead("filename=\"a\"; filename*=UTF-8''b")])],
    ['UPLOAD_MALFORMED--name-star', buildForm([{ headers: [disp("; name*=utf-8''stream")], content: 'x' }])],
    ['UPLOAD_PART_ORDER--body-after-stream', buildForm([streamPart('s'), bodyPart('b')])],
    [
      'UPLOAD_CONTENT_ENCODING--base64-part',
      buildForm([{ headers: [disp(''), 'Content-Transfer-Encoding: base64'], content: 'eA==' }]),
    ],
    ['UPLOAD_UNSUPPORTED_MEDIA_TYPE--latin1-body', buildForm([{ name: 'body', type: 'text/plain; charset=latin1', content: 'x' }])],
    ['UPLOAD_BODY_NOT_UTF8--c3-28', buildForm([bodyPart(new Uint8Array([0xc3, 0x28]))])],
    ['UPLOAD_BODY_NOT_UTF8--lone-surrogate-cesu', buildForm([bodyPart(new Uint8Array([0xed, 0xa0, 0x80]))])],
    ['UPLOAD_MISSING_PART--empty-form', Buffer.from(`--${BOUNDARY}--\r\n`)],
  ];
  return new Map(entries.map(([name, bytes]) => [`${name}.multipart`, bytes]));
}

const here = dirname(fileURLToPath(import.meta.url));
/** Folder of the corpus. */
export const NEGATIVE_DIR = join(here, 'negative');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(NEGATIVE_DIR, { recursive: true });
  for (const f of readdirSync(NEGATIVE_DIR)) rmSync(join(NEGATIVE_DIR, f));
  for (const [name, bytes] of corpus()) writeFileSync(join(NEGATIVE_DIR, name), bytes);
  console.log(`wrote ${corpus().size} files to ${NEGATIVE_DIR}`);
}
