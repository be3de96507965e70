import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import {
  DECLARATIONS_FILE,
  GENERATED_SCHEMAS,
  VALIDATORS_FILE,
  validatorsSource,
} from '../scripts/validators-source.js';
import * as generated from '../src/generated/validators.js';
import { AJV_OPTIONS } from '../src/internal/ajv-options.js';
import type { SchemaValidator } from '../src/internal/schema-check.js';
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

/** `value`, then for every position in it (bounded): the value without that member, and with each wrong value there. */
function* variants(value: unknown, limit: number): Generator<unknown> {
  yield value;
  let n = 0;
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, path: (string | number)[]): void => {
    paths.push(path);
    if (Array.isArray(v)) v.forEach((c, i) => walk(c, [...path, i]));
    else if (v !== null && typeof v === 'object')
      for (const [k, c] of Object.entries(v)) walk(c, [...path, k]);
  };
  walk(value, []);
  for (const path of paths) {
    if (path.length === 0) continue;
    for (const replacement of [undefined, ...WRONG]) {
      if (n++ >= limit) return;
      const copy = structuredClone(value) as Record<string | number, unknown>;
      let parent = copy;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
      const last = path[path.length - 1]!;
      if (replacement === undefined) {
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last];
      } else parent[last] = replacement;
      yield copy;
    }
  }
  yield* [undefined, null, [], {}, [{}], 'x', 1];
}

function outcome(validate: SchemaValidator | ValidateFunction, value: unknown): unknown {
  const valid = validate(value);
  return { valid, errors: valid ? null : validate.errors };
}

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
    const { js, dts } = validatorsSource();
    expect(readFileSync(VALIDATORS_FILE, 'utf8')).toBe(js);
    expect(readFileSync(DECLARATIONS_FILE, 'utf8')).toBe(dts);
  }, 30_000);

  for (const name of Object.keys(GENERATED_SCHEMAS) as (keyof typeof GENERATED_SCHEMAS)[]) {
    it(`${name}: same verdict and errors as the schema compiled at run time`, () => {
      const runtime = new Ajv(AJV_OPTIONS).compile(GENERATED_SCHEMAS[name]);
      const inputs = corpora[name]();
      expect(inputs.length).toBeGreaterThan(0);
      let invalid = 0;
      let tried = 0;
      for (const input of inputs)
        for (const v of variants(input, 4000)) {
          const expected = outcome(runtime, v);
          expect(outcome(generated[name], v)).toEqual(expected);
          tried++;
          if (!(expected as { valid: boolean }).valid) invalid++;
        }
      expect(invalid).toBeGreaterThan(tried / 2);
    }, 120_000);
  }
});
