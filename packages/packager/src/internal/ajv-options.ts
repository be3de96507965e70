import type { Options } from 'ajv';

/** Options of the request schemas, compiled at build time (scripts/generate-validators.ts) or by `bodyValidator`. */
export const AJV_OPTIONS = { allErrors: true, strict: false } as const satisfies Options;
