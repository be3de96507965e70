import { byteByByte, chunked, loadNegativeCorpus } from '@org/test-utils';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPUS_OPTIONS, NEGATIVE_DIR, corpus } from '../testdata/generate.js';
import { BOUNDARY } from './helpers.js';
import { failure, fakeRequest, outcome } from './fake-request.js';

const HEADERS = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
const vectors = loadNegativeCorpus(NEGATIVE_DIR);

describe('negative corpus', () => {
  it('matches what testdata/generate.ts produces (never hand-edited)', () => {
    const expected = corpus();
    expect(readdirSync(NEGATIVE_DIR).sort()).toEqual([...expected.keys()].sort());
    for (const [name, bytes] of expected)
      expect(readFileSync(join(NEGATIVE_DIR, name)).equals(bytes), name).toBe(true);
  });

  it.each(vectors.map((v) => [v.file, v] as const))(
    '%s yields its code whole, chunked and byte by byte',
    async (_f, v) => {
      for (const feed of [[v.bytes], [...chunked(v.bytes, 7)], [...byteByByte(v.bytes)]]) {
        await expect(outcome(fakeRequest(HEADERS, feed), CORPUS_OPTIONS)).resolves.toEqual({ code: v.code });
      }
    },
  );

  it('gives lowercase, printable-ASCII messages that never echo part contents', async () => {
    for (const v of vectors) {
      const err = (await failure(fakeRequest(HEADERS, [v.bytes]), CORPUS_OPTIONS))!;
      expect(err.message, v.file).toMatch(/^[a-z][\x20-\x7e]*$/);
      expect(err.message, v.file).not.toContain('polluted');
    }
  });
});
