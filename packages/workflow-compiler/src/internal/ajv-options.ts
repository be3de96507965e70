import type { Options } from 'ajv';

/** Options of every schema compiled here, at run time (`compileSchema`) or at build time (scripts/generate-validators.ts). */
export const AJV_OPTIONS = {
  allErrors: true,
  verbose: true,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
} as const satisfies Options;
