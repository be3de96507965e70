import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import {
  DECLARATIONS_FILE,
  GENERATED_SCHEMAS,
  VALIDATORS_FILE,
  validatorsSource,
} from '../scripts/validators-source.js';
import { expectCurrent, expectSameOutcomes, variants } from '../scripts/standalone-check.js';
import * as generated from '../src/generated/validators.js';
import { AJV_OPTIONS } from '../src/internal/ajv-options.js';
import { TESTDATA } from './fixtures.js';

// The validators generated at build time (ajv standalone code, docs/adr/0148) must be current and behave exactly
// like the same schemas compiled at run time: same verdict and same errors (instancePath, keyword, params, message,
// schemaPath, schema, parentSchema, data) for every input tried.

const REPO = join(TESTDATA, '..', '..', '..');
/** The parsed file, or nothing for the negative vectors that are not JSON. */
const parse = (path: string): unknown[] => {
  try {
    return [JSON.parse(readFileSync(path, 'utf8'))];
  } catch {
    return [];
  }
};
const json = (path: string): unknown => parse(path)[0];
const jsonFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .map((f) => join(dir, f));

const WRONG: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  70000,
  2 ** 60,
  '',
  'x',
  '\u{1F600}',
  'true',
  '${A}',
  [],
  [1],
  {},
  { z: 1 },
];

const corpora: Record<keyof typeof GENERATED_SCHEMAS, () => unknown[]> = {
  bootstrap: () => [
    ...['timer-metrics', 'http-upload-api', 'split-aggregate'].flatMap((e) => [
      json(join(REPO, 'examples', e, 'bootstrap.example.json')),
    ]),
    json(join(REPO, 'packages', 'oapp-format', 'testdata', 'vectors', 'bootstrap.json')),
  ],
  workflow: () =>
    [...jsonFiles(join(TESTDATA, 'workflows')), ...jsonFiles(join(TESTDATA, 'negative'))].flatMap(parse),
  manifest: () => jsonFiles(join(TESTDATA, 'manifests')).flatMap(parse),
};

describe('validators generated at build time', () => {
  it('are current: src/generated is what scripts/generate-validators.ts writes (run `pnpm generate`)', () => {
    expectCurrent(validatorsSource, { js: VALIDATORS_FILE, dts: DECLARATIONS_FILE });
  }, 30_000);

  for (const name of Object.keys(GENERATED_SCHEMAS) as (keyof typeof GENERATED_SCHEMAS)[]) {
    it(`${name}: same verdict and errors as the schema compiled at run time`, () => {
      const runtime = new Ajv(AJV_OPTIONS).compile(GENERATED_SCHEMAS[name]);
      const inputs = corpora[name]();
      expect(inputs.length).toBeGreaterThan(0);
      const { tried, invalid } = expectSameOutcomes(
        runtime,
        generated[name],
        (function* () {
          for (const input of inputs) yield* variants(input, 4000, WRONG);
        })(),
      );
      expect(invalid).toBeGreaterThan(tried / 2);
    }, 120_000);
  }
});
