import { byteByByte, chunked } from '@org/test-utils';
import { describe, expect, it } from 'vitest';
import { UploadError } from '../src/index.js';
import { FormScanner } from '../src/internal/form-scanner.js';
import { BOUNDARY, bodyPart, buildForm, sha256, streamPart } from './helpers.js';
import { fakeRequest, outcome } from './fake-request.js';

const HEADERS = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const OPTIONS = { multipartByteLimit: 1000, bodyFieldByteLimit: 64 };

/** A scanner that records what it saw. */
function recorder(captureLimit = 64) {
  const seen: { heads: string[][]; ends: (string | undefined)[] } = { heads: [], ends: [] };
  const scanner = new FormScanner(BOUNDARY, captureLimit, {
    onPartHeaders: (lines) => {
      seen.heads.push(lines);
      return lines.some((l) => l.includes('name="body"'));
    },
    onPartEnd: (captured) => seen.ends.push(captured?.toString('latin1')),
  });
  return { scanner, seen };
}

describe('FormScanner', () => {
  const form = buildForm([
    bodyPart('{"a":"\r\n--not-it"}'),
    streamPart('\r\n--' + BOUNDARY.slice(0, -1) + 'X'),
  ]);

  it('finds the same parts whole, in 7-byte chunks and byte by byte', () => {
    for (const feed of [[form], [...chunked(form, 7)], [...byteByByte(form)]]) {
      const { scanner, seen } = recorder();
      for (const c of feed) scanner.push(Buffer.from(c));
      scanner.end();
      expect(scanner.isComplete).toBe(true);
      expect(scanner.partCount).toBe(2);
      expect(seen.ends).toEqual(['{"a":"\r\n--not-it"}', undefined]);
      expect(seen.heads[0]).toEqual([
        'Content-Disposition: form-data; name="body"',
        'Content-Type: application/json',
      ]);
    }
  });

  it('S17: captures exactly the field cap and refuses one byte more with UPLOAD_FIELD_TOO_LARGE, at any chunking', () => {
    const exact = buildForm([bodyPart('x'.repeat(64))]);
    const over = buildForm([bodyPart('x'.repeat(65))]);
    for (const size of [1, 3, 64, 4096]) {
      const ok = recorder();
      for (const c of chunked(exact, size)) ok.scanner.push(Buffer.from(c));
      expect(ok.seen.ends).toEqual(['x'.repeat(64)]);
      const bad = recorder();
      expect(() => {
        for (const c of chunked(over, size)) bad.scanner.push(Buffer.from(c));
      }).toThrowCode(UploadError, 'UPLOAD_FIELD_TOO_LARGE');
    }
  });

  it('S23: refuses the third part when its delimiter line arrives, before its headers', () => {
    const { scanner } = recorder();
    const prefix = buildForm([bodyPart('a'), streamPart('b')], { close: false });
    scanner.push(prefix);
    expect(() => scanner.push(Buffer.from(`--${BOUNDARY}\r\n`))).toThrowCode(
      UploadError,
      'UPLOAD_UNKNOWN_PART',
    );
  });

  it('S21: refuses a form without its closing delimiter with UPLOAD_MALFORMED at the end', () => {
    const { scanner } = recorder();
    scanner.push(buildForm([bodyPart('a')], { close: false }));
    expect(() => scanner.end()).toThrowCode(UploadError, 'UPLOAD_MALFORMED');
  });

  it('ignores a preamble and an epilogue', () => {
    const { scanner, seen } = recorder();
    scanner.push(
      Buffer.concat([Buffer.from('preamble\r\n'), buildForm([bodyPart('a')]), Buffer.from('epilogue')]),
    );
    scanner.end();
    expect(seen.ends).toEqual(['a']);
  });
});

describe('readUpload on chunked input', () => {
  it('S13: gives the same body and stream digest whole, in 5-byte chunks and byte by byte', async () => {
    const stream = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 31) & 0xff));
    const form = buildForm([bodyPart('{"é":1}'), streamPart(stream)]);
    for (const feed of [[form], [...chunked(form, 5)], [...byteByByte(form)]]) {
      await expect(outcome(fakeRequest(HEADERS, feed), OPTIONS)).resolves.toEqual({
        ok: { kind: 'multipart', body: '{"é":1}', bytes: 1000, sha: sha256(stream) },
      });
    }
  });

  it('S14: refuses 1001 stream bytes with UPLOAD_FILE_TOO_LARGE byte by byte too', async () => {
    const form = buildForm([streamPart(Buffer.alloc(1001))]);
    await expect(outcome(fakeRequest(HEADERS, byteByByte(form)), OPTIONS)).resolves.toEqual({
      code: 'UPLOAD_FILE_TOO_LARGE',
    });
  });
});
