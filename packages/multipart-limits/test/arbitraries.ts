// Shared fast-check inputs of the property tests: multipart tokens and chunkings.
import { fc } from '@fast-check/vitest';
import { BOUNDARY } from './helpers.js';

/** The pieces forms are made of (delimiters, CRLFs, part headers, filler), plus `extra` ones. */
export function formToken(extra: string[] = []): fc.Arbitrary<string> {
  return fc.constantFrom(
    `--${BOUNDARY}`,
    `\r\n--${BOUNDARY}`,
    `--${BOUNDARY}--`,
    '\r\n',
    '\r\n\r\n',
    'Content-Disposition: form-data; name="body"',
    'Content-Disposition: form-data; name="stream"; filename="a"',
    'Content-Type: application/octet-stream',
    ...extra,
    ' ',
    ':',
    '--',
    'x',
  );
}

/** Splits bytes at the given cut points (taken modulo the length, duplicates dropped). */
export function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let last = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(last, p));
    last = p;
  }
  return out;
}
