import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { UPLOAD_ERROR_CODES } from '../src/index.js';
import { BOUNDARY, bodyPart, buildForm, streamPart } from './helpers.js';
import { formToken, split } from './arbitraries.js';
import { fakeRequest, outcome } from './fake-request.js';

const HEADERS = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const OPTIONS = { multipartByteLimit: 256, bodyFieldByteLimit: 64 };
const RUNS = process.env['SLOW'] ? 2000 : 60;

const validForm = fc
  .tuple(fc.string({ maxLength: 64 }), fc.uint8Array({ maxLength: 256 }))
  .map(([body, stream]) => buildForm([bodyPart(body), streamPart(stream)]));

describe('readUpload properties', () => {
  test.prop([fc.uint8Array({ maxLength: 600 }), fc.array(fc.nat(), { maxLength: 8 })], { numRuns: RUNS })(
    'any byte garbage as a multipart body yields a coded error or a result, never a crash',
    async (garbage, cuts) => {
      const result = await outcome(fakeRequest(HEADERS, split(Buffer.from(garbage), cuts)), OPTIONS);
      if ('code' in result) expect(UPLOAD_ERROR_CODES).toContain(result.code);
    },
  );

  test.prop([validForm, fc.array(fc.nat(), { maxLength: 10 })], { numRuns: RUNS })(
    'a form split at any points gives the same outcome as the whole form',
    async (form, cuts) => {
      const whole = await outcome(fakeRequest(HEADERS, [form]), OPTIONS);
      const pieces = await outcome(fakeRequest(HEADERS, split(form, cuts)), OPTIONS);
      expect(pieces).toEqual(whole);
    },
  );

  test.prop([validForm, fc.nat(), fc.integer({ min: 0, max: 255 })], { numRuns: RUNS })(
    'flipping or truncating any byte of a valid form yields a coded error or a result, never a crash',
    async (form, at, value) => {
      const flipped = Buffer.from(form);
      flipped[at % form.length] = value;
      for (const input of [flipped, form.subarray(0, at % form.length)]) {
        const result = await outcome(fakeRequest(HEADERS, [input]), OPTIONS);
        if ('code' in result) expect(UPLOAD_ERROR_CODES).toContain(result.code);
      }
    },
  );

  const token = formToken();
  test.prop([fc.array(token, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 })], { numRuns: RUNS })(
    'any sequence of multipart tokens yields a coded error or a result, never a crash or a hang',
    async (tokens, cuts) => {
      const result = await outcome(fakeRequest(HEADERS, split(Buffer.from(tokens.join('')), cuts)), OPTIONS);
      if ('code' in result) expect(UPLOAD_ERROR_CODES).toContain(result.code);
      else expect(result.ok.kind).toBe('multipart');
    },
  );
});
