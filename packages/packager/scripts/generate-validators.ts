/**
 * Writes src/generated/validators.js and .d.ts (scripts/validators-source.ts). Run by `pnpm generate` and before
 * `pnpm build`; test/generated-validators.test.ts fails when the files in the tree are not current.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DECLARATIONS_FILE, VALIDATORS_FILE, validatorsSource } from './validators-source.js';

const { js, dts } = validatorsSource();
mkdirSync(dirname(VALIDATORS_FILE), { recursive: true });
writeFileSync(VALIDATORS_FILE, js);
writeFileSync(DECLARATIONS_FILE, dts);
