/**
 * Compiles JSON schemas into ajv's standalone code (ajv/dist/standalone, ESM), by default with the options of
 * `compileSchema` (src/internal/ajv-options.ts), so that a package validates without compiling a schema at run time
 * (docs/adr/0148). Used by this package's scripts/validators-source.ts and by those of @org/workflow-test-runner
 * (which has no ajv of its own: ajv is resolved from here) and @org/packager. Deterministic for a given ajv and
 * schemas.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type Options } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import { AJV_OPTIONS } from '../src/internal/ajv-options.js';

// The standalone code `require`s ajv's run-time helpers, which an ES module cannot: the one helper these schemas use
// (string length in code points, for minLength/maxLength) is inlined from ajv's own source.
const UCS2LENGTH = 'require("ajv/dist/runtime/ucs2length").default';

/**
 * Where a package's generator writes: src/generated/validators.js and its declarations (.d.ts) in the package whose
 * scripts/ folder holds the module at `scriptUrl` (its `import.meta.url`).
 */
export function validatorsFiles(scriptUrl: string): { js: string; dts: string } {
  const js = join(dirname(fileURLToPath(scriptUrl)), '..', 'src', 'generated', 'validators.js');
  return { js, dts: js.replace(/\.js$/, '.d.ts') };
}

export interface StandaloneFile {
  /** The first line of both files (a comment naming the generator and its sources). */
  header: string;
  /** Where the generated declarations import the `SchemaValidator` type from. */
  validatorType: string;
  /** The Ajv options of the run-time compile the generated code replaces (default: `compileSchema`'s). */
  options?: Options;
}

/** The text of the generated module (one export per schema, by name) and of its declarations. */
export function standaloneSource(
  schemas: Record<string, object>,
  file: StandaloneFile,
): { js: string; dts: string } {
  const ajv = new Ajv({ ...(file.options ?? AJV_OPTIONS), code: { source: true, esm: true, lines: true } });
  const refs: Record<string, string> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    // A schema without `$id` is added under its export name.
    const id = (schema as { $id?: unknown }).$id;
    ajv.addSchema(schema, typeof id === 'string' ? undefined : name);
    refs[name] = typeof id === 'string' ? id : name;
  }
  let code = standalone.default(ajv, refs).split(UCS2LENGTH).join('ajvUcs2length');
  if (code.includes('require('))
    throw new Error('the standalone code requires an ajv helper that is not inlined');
  const helper = createRequire(import.meta.url)('ajv/dist/runtime/ucs2length') as { default: () => number };
  code = code.replace('"use strict";', `"use strict";\nconst ajvUcs2length = ${helper.default.toString()};`);
  const js = `${file.header}/* eslint-disable */\n${code}\n`;
  const dts = `${file.header}import type { SchemaValidator } from '${file.validatorType}';\n${Object.keys(
    schemas,
  )
    .map((k) => `export declare const ${k}: SchemaValidator;\n`)
    .join('')}`;
  return { js, dts };
}
