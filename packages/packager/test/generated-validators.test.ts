import { Ajv } from 'ajv';
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

describe('request validators generated at build time', () => {
  it('are current: src/generated is what scripts/generate-validators.ts writes (run `pnpm generate`)', () => {
    expectCurrent(validatorsSource, { js: VALIDATORS_FILE, dts: DECLARATIONS_FILE });
  }, 30_000);

  for (const name of Object.keys(GENERATED_SCHEMAS) as (keyof typeof GENERATED_SCHEMAS)[]) {
    it(`${name}: same verdict and errors as the schema compiled at run time`, () => {
      const runtime = new Ajv(AJV_OPTIONS).compile(GENERATED_SCHEMAS[name]);
      const { tried, invalid } = expectSameOutcomes(
        runtime,
        generated[name],
        (function* () {
          for (const input of VALID[name]) yield* variants(input, 3000, WRONG, [{ unknown: 1 }]);
        })(),
      );
      expect(runtime(VALID[name][0])).toBe(true);
      expect(invalid).toBeGreaterThan(tried / 2);
    }, 60_000);
  }
});
