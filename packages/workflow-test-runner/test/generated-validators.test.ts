import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileSchema } from '@org/workflow-compiler';
import { describe, expect, it } from 'vitest';
import {
  expectCurrent,
  expectSameOutcomes,
  variants,
} from '../../workflow-compiler/scripts/standalone-check.js';
import {
  DECLARATIONS_FILE,
  GENERATED_SCHEMAS,
  VALIDATORS_FILE,
  validatorsSource,
} from '../scripts/validators-source.js';
import * as generated from '../src/generated/validators.js';

// The validators generated at build time (ajv standalone code, docs/adr/0148) must be current and behave exactly
// like the same schemas compiled at run time by the compiler's `compileSchema` (what this package used before):
// same verdict and same errors (instancePath, keyword, params, message, schemaPath, schema, parentSchema, data).

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const files = (dir: string, name: (f: string) => boolean): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => name(f.split('/').pop()!) && !f.includes('node_modules'))
    .map((f) => join(dir, f));
const json = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));
const suites = [join(REPO, 'examples'), join(REPO, 'packages', 'workflow-test-runner', 'testdata')];

const WRONG: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  99,
  600,
  70000,
  2 ** 60,
  '',
  'x',
  '\u{1F600}',
  'true',
  '222',
  'GET',
  [],
  [''],
  ['a', 'b'],
  {},
  { z: 1 },
  { includes: [] },
  { customizations: [] },
];

/** Members the files may lack, added one at a time to each file (both branches of every oneOf/if/not). */
const ADDED: Record<keyof typeof GENERATED_SCHEMAS, Record<string, unknown>[]> = {
  runnerConfig: [
    { resourceDirs: ['r'] },
    { testDirs: ['t'] },
    { resourceDir: 'r' },
    { testDir: 't' },
    { concurrency: 65 },
    { iterations: 10_001 },
    { stopOnFailure: 'yes' },
    { unknown: 1 },
  ],
  testFile: [
    { testThisRoute: 'r' },
    { testThisStep: 's' },
    { manifest: { includes: [] } },
    { manifest: { customizations: [] } },
    { manifest: { includes: [], customizations: [] } },
    { useThisTestConfigFile: 'c.json' },
    { mockEndpointResponses: [{ whenThisIsCalled: 'u', returnThisFile: 'f', returnThisBody: 'b' }] },
    { makeTheseCalls: [{ url: 'u', headers: [['a']], expectedResponseCode: '99', timeoutSeconds: 0 }] },
    { secondsToWaitForCompletion: 1_000_001 },
    { unknown: 1 },
  ],
};

function* inputs(name: keyof typeof GENERATED_SCHEMAS): Generator<unknown> {
  const isConfig = name === 'runnerConfig';
  for (const dir of suites)
    for (const path of files(dir, (f) =>
      isConfig ? f === 'testrunner.config.json' : f.endsWith('.test.json'),
    )) {
      const value = json(path);
      yield* variants(value, 3000, WRONG);
      for (const added of ADDED[name]) yield { ...(value as object), ...added };
    }
}

describe('validators generated at build time', () => {
  it('are current: src/generated is what scripts/generate-validators.ts writes (run `pnpm generate`)', () => {
    expectCurrent(validatorsSource, { js: VALIDATORS_FILE, dts: DECLARATIONS_FILE });
  }, 30_000);

  for (const name of Object.keys(GENERATED_SCHEMAS) as (keyof typeof GENERATED_SCHEMAS)[]) {
    it(`${name}: same verdict and errors as the schema compiled at run time`, () => {
      const runtime = compileSchema(GENERATED_SCHEMAS[name])();
      const { tried, invalid } = expectSameOutcomes(runtime, generated[name], inputs(name));
      expect(tried).toBeGreaterThan(100);
      expect(invalid).toBeGreaterThan(tried / 2);
      expect(invalid).toBeLessThan(tried);
    }, 120_000);
  }
});
