import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

// The browser build of the main entry (ADR 0146, package.json `exports` condition "browser"): ESM only, with
// @org/envelope-crypto left external so that the bundler takes that package's own browser build. The one
// `Buffer` call (a UTF-8 length) is served by src/browser/buffer.ts, a module of this bundle, not a global. Any
// `node:` import or sodium-native fails the build. The types are those of the Node entry (the same API).
const browser = join(dirname(fileURLToPath(import.meta.url)), 'src/browser');

// A named export (tsup reads `tsup` before `default`): tool configs other than tsup.config.ts export no default.
export const tsup = defineConfig({
  entry: { 'browser/index': 'src/index.ts' },
  format: ['esm'],
  platform: 'browser',
  target: 'es2022',
  dts: false,
  clean: false,
  sourcemap: true,
  removeNodeProtocol: false,
  // Private, never published: bundled in (ADR 0096).
  noExternal: ['@org/strict-json'],
  inject: [join(browser, 'buffer.ts')],
  esbuildPlugins: [
    {
      name: 'browser-guard',
      setup(b) {
        b.onResolve({ filter: /^(node:|sodium-native$)/ }, (args) => ({
          errors: [{ text: `${args.path} has no browser build (imported by ${args.importer})` }],
        }));
      },
    },
  ],
});
