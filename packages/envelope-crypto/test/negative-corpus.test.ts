// The named negative corpus of `-2/` strings (docs/engineering.md §3): testdata/negative/<CODE>--<defect>.txt.
// Each file has one defect and its name states the code decryptString must throw; adding a file adds a test.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CryptoError, decodeUtf8, decryptString, type KeyTuple } from '../src/index.js';
import { loadNegativeCorpus } from '@org/test-utils';
import { CORPUS_KEYS, CORPUS_PLAINTEXT, corpus } from '../testdata/generate.js';

const DIR = fileURLToPath(new URL('../testdata/negative/', import.meta.url));
const FILES = loadNegativeCorpus(DIR);
const candidates: KeyTuple[] = [
  { senderPublicKey: CORPUS_KEYS.senderPublicKey, recipientSecretKey: CORPUS_KEYS.recipientSecretKey },
];

describe('testdata/negative', () => {
  it('is exactly what testdata/generate.ts produces (never edited by hand)', () => {
    const expected = corpus();
    const names = Object.keys(expected).filter((n) => n !== 'valid.txt');
    expect(FILES.map((f) => f.file)).toEqual([...names].sort());
    for (const f of FILES) expect(decodeUtf8(f.bytes)).toBe(expected[f.file]);
    expect(readFileSync(`${DIR}valid.txt`, 'utf8')).toBe(expected['valid.txt']);
  });

  it('valid.txt opens with the corpus key tuple', () => {
    expect(decryptString(readFileSync(`${DIR}valid.txt`, 'utf8'), candidates)).toEqual(CORPUS_PLAINTEXT);
  });

  it.each(FILES.map((f) => [f.file, f] as const))('%s throws its code', (_file, f) => {
    const text = decodeUtf8(f.bytes);
    expect(() => decryptString(text, candidates)).toThrowCode(CryptoError, f.code);
  });
});
