import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

// The browser build (ADR 0146, package.json `exports` condition "browser"): ESM only, the noble (`js`) engine.
// The library's Node-only modules are replaced by their browser versions in src/browser/, `node:crypto` by
// src/browser/node-crypto.ts, and the few `Buffer` calls of the strict decoders by src/browser/buffer.ts (a module
// of this bundle, not a global). Any other `node:` import or sodium-native fails the build. The types are those
// of the Node entry (the same API).
const src = resolve(dirname(fileURLToPath(import.meta.url)), 'src');
const browser = join(src, 'browser');
const SWAPS = new Map([
  [join(src, 'internal/engine.ts'), join(browser, 'engine.ts')],
  [join(src, 'internal/sodium.ts'), join(browser, 'sodium.ts')],
  [join(src, 'internal/native.ts'), join(browser, 'native.ts')],
]);

// A named export (tsup reads `tsup` before `default`): tool configs other than tsup.config.ts export no default.
export const tsup = defineConfig({
  entry: { 'browser/index': 'src/index.ts' },
  format: ['esm'],
  platform: 'browser',
  target: 'es2022',
  dts: false,
  removeNodeProtocol: false,
  clean: false,
  sourcemap: true,
  inject: [join(browser, 'buffer.ts')],
  esbuildPlugins: [
    {
      name: 'browser-platform',
      setup(b) {
        b.onResolve({ filter: /^node:crypto$/ }, () => ({ path: join(browser, 'node-crypto.ts') }));
        b.onResolve({ filter: /^(node:|sodium-native$)/ }, (args) => ({
          errors: [{ text: `${args.path} has no browser build (imported by ${args.importer})` }],
        }));
        b.onResolve({ filter: /^\./ }, (args) => {
          if (!args.importer.startsWith(src) || args.importer.startsWith(browser)) return undefined;
          const swap = SWAPS.get(resolve(dirname(args.importer), args.path.replace(/\.js$/, '.ts')));
          return swap === undefined ? undefined : { path: swap };
        });
      },
    },
  ],
});
