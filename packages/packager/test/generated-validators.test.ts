import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import {
  DECLARATIONS_FILE,
  GENERATED_SCHEMAS,
  VALIDATORS_FILE,
  validatorsSource,
} from '../scripts/validators-source.js';
import type { SchemaValidator } from '../src/body-json.js';
import * as generated from '../src/generated/validators.js';
import { AJV_OPTIONS } from '../src/internal/ajv-options.js';

// The request validators generated at build time (ajv standalone code, docs/adr/0148) must be current and behave
// exactly like the same schemas compiled at run time with `bodyValidator`'s options: same verdict and same errors.

const key = (id: string, purpose: string, type: string) => ({ id, purpose, type, keyHex: 'ab'.repeat(32) });
const keys = [
  key('packager', 'authenticated', 'secret'),
  key('dep', 'authenticated', 'public'),
  { ...key('author', 'sign', 'secret'), metadata: { note: 'x' } },
];
const common = {
  keys,
  encryptionKeys: ['dep'],
  packagerIdentityPrivateKey: 'packager',
  signers: [{ key: 'author', signText: 'release' }],
};
const release = { sequence: 7, expiresAt: '2030-01-02T03:04:05.678Z', formatVersion: 2 };
const VALID: Record<keyof typeof GENERATED_SCHEMAS, unknown[]> = {
  packageRequest: [
    { packageId: 'app', ...common, license: { to: 'x' }, ...release },
    { packageId: 'app', ...common, formatVersion: 1, expiresAt: '2030-01-02T03:04:05Z' },
  ],
  bootstrapEncryptRequest: [{ ...common, ...release }],
  stringEncryptRequest: [{ keys, encryptionKeys: ['dep'], packagerIdentityPrivateKey: 'packager' }],
  packageEnvelopeRequest: [
    {
      ...common,
      recipientKey: 'dep',
      packaging: {
        packageId: 'app',
        packagerIdentities: ['packager'],
        requiredSigners: ['author', { id: 'author', description: 'the author' }],
        additionalSigners: [{ id: 'review' }],
        requiredAdditionalSignerCount: 0,
        minimumSequence: 3,
      },
    },
  ],
};

const WRONG: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  3,
  2 ** 53,
  '',
  'x',
  'x'.repeat(257),
  '2030-01-02',
  [],
  [''],
  [{}],
  {},
  { id: 'a' },
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
      for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
      const last = path[path.length - 1]!;
      if (replacement === undefined) {
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last];
      } else parent[last] = replacement;
      yield copy;
    }
  }
  yield* [undefined, null, [], {}, [{}], 'x', 1, { unknown: 1 }];
}

function outcome(validate: SchemaValidator, value: unknown): unknown {
  const valid = validate(value);
  return { valid, errors: valid ? null : validate.errors };
}

describe('request validators generated at build time', () => {
  it('are current: src/generated is what scripts/generate-validators.ts writes (run `pnpm generate`)', () => {
    const { js, dts } = validatorsSource();
    expect(readFileSync(VALIDATORS_FILE, 'utf8')).toBe(js);
    expect(readFileSync(DECLARATIONS_FILE, 'utf8')).toBe(dts);
  }, 30_000);

  for (const name of Object.keys(GENERATED_SCHEMAS) as (keyof typeof GENERATED_SCHEMAS)[]) {
    it(`${name}: same verdict and errors as the schema compiled at run time`, () => {
      const runtime = new Ajv(AJV_OPTIONS).compile(GENERATED_SCHEMAS[name]);
      let invalid = 0;
      let tried = 0;
      for (const input of VALID[name])
        for (const v of variants(input, 3000)) {
          const expected = outcome(runtime, v);
          expect(outcome(generated[name], v)).toEqual(expected);
          tried++;
          if (!(expected as { valid: boolean }).valid) invalid++;
        }
      expect(runtime(VALID[name][0])).toBe(true);
      expect(invalid).toBeGreaterThan(tried / 2);
    }, 60_000);
  }
});
