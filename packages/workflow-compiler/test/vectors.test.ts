import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadNegativeCorpus } from '@org/test-utils';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_ERROR_CODES, WorkflowError, compileWorkflow } from '../src/index.js';
import { NEGATIVE, goldenText } from '../testdata/generate.js';
import { RESOURCE_DIRS, TESTDATA } from './fixtures.js';

const corpus = loadNegativeCorpus(join(TESTDATA, 'negative'));

describe('negative corpus (testdata/negative)', () => {
  it('holds exactly the generated files, each naming a known code', () => {
    expect(corpus.map((v) => v.file).sort()).toEqual(
      Object.keys(NEGATIVE)
        .map((n) => `${n}.json`)
        .sort(),
    );
    expect(readdirSync(join(TESTDATA, 'negative')).length).toBe(corpus.length);
    for (const v of corpus) expect(WORKFLOW_ERROR_CODES).toContain(v.code);
  });

  it.each(corpus.map((v) => [v.file, v] as const))('%s', async (_file, v) => {
    expect(v.bytes).toEqual(NEGATIVE[v.file.replace(/\.json$/, '')]);
    await expect(compileWorkflow(v.bytes, { resourceDirs: RESOURCE_DIRS })).rejects.toThrowCode(
      WorkflowError,
      v.code,
    );
  });
});

describe('golden files (testdata/golden)', () => {
  it('are what generate.ts writes: JSON with two-space indent and a trailing newline', () => {
    for (const f of readdirSync(join(TESTDATA, 'golden'))) {
      const text = readFileSync(join(TESTDATA, 'golden', f), 'utf8');
      expect(goldenText(JSON.parse(text))).toBe(text);
    }
  });
});
