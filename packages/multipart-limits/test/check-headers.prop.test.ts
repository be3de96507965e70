import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { UPLOAD_ERROR_CODES, checkUploadHeaders, isUploadError } from '../src/index.js';

const RUNS = process.env['SLOW'] ? 5000 : 200;
const typeLike = fc.oneof(
  fc.string({ maxLength: 120 }),
  fc
    .tuple(
      fc.constantFrom(
        'multipart/form-data',
        'application/json',
        'text/plain',
        'application/octet-stream',
        'x/y',
      ),
      fc.array(
        fc.tuple(fc.constantFrom('boundary', 'charset', 'Boundary', 'b'), fc.string({ maxLength: 80 })),
      ),
      fc.constantFrom(';', '; ', ' ;', ';\t'),
    )
    .map(([t, params, sep]) => t + params.map(([k, v]) => `${sep}${k}=${v}`).join('')),
);

describe('checkUploadHeaders properties', () => {
  test.prop([typeLike, fc.option(fc.string({ maxLength: 12 })), fc.option(fc.nat())], { numRuns: RUNS })(
    'any content type, encoding and length yields a kind or a coded UploadError, never another error',
    (type, encoding, length) => {
      const headers = {
        'content-type': type,
        ...(encoding === null ? {} : { 'content-encoding': encoding }),
        ...(length === null ? {} : { 'content-length': String(length) }),
      };
      try {
        expect(['json', 'text', 'octet', 'multipart', 'empty']).toContain(
          checkUploadHeaders(headers, { multipartByteLimit: 1000 }),
        );
      } catch (err) {
        expect(isUploadError(err) && UPLOAD_ERROR_CODES.includes(err.code)).toBe(true);
      }
    },
  );

  test.prop([fc.constantFrom('JSON', 'Json', 'json'), fc.constantFrom('UTF-8', 'utf-8', 'Utf-8')], {
    numRuns: 20,
  })('media type and charset compare case-insensitively', (sub, charset) => {
    expect(checkUploadHeaders({ 'content-type': `Application/${sub}; Charset=${charset}` })).toBe('json');
  });
});
