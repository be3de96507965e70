import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

/**
 * The name the realm scripts' bundle gets inside their wrapper function. The wrapper (banner + footer) makes
 * each built file a plain script whose completion value is its entry's `completion` export, with nothing left on
 * the global object: `var` in a function is local.
 */
const REALM_SCRIPT = '__realmScript';

/** The same output from any working directory (esbuild's path comments are relative to it). */
const fromPackageDir: Options['esbuildOptions'] = (o) => {
  o.absWorkingDir = here('.');
};

/**
 * The sandbox (ADR 0050), built into `dist/sandbox/` apart from the package's API: the worker thread program, and
 * the two scripts evaluated inside QuickJS. Paths are absolute and nothing depends on the working directory, so
 * `test/build-sandbox.ts` (vitest globalSetup) builds exactly what `pnpm build` builds.
 */
export const sandboxBuilds: Options[] = [
  {
    name: 'sandbox-worker',
    entry: { worker: here('src/sandbox/worker.ts') },
    outDir: here('dist/sandbox'),
    tsconfig: here('tsconfig.json'),
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    // Resolved from dist/sandbox/ at run time, like the package's other dependencies.
    external: ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-sync'],
    sourcemap: true,
    clean: false,
    esbuildOptions: fromPackageDir,
  },
  {
    name: 'sandbox-realm',
    // prelude.global.js (completes with [begin, audit]) and util.global.js (evaluates to the helper factory).
    entry: { prelude: here('src/sandbox/realm/prelude.ts'), util: here('src/sandbox/realm/util-factory.ts') },
    outDir: here('dist/sandbox'),
    tsconfig: here('tsconfig.json'),
    format: ['iife'],
    platform: 'neutral',
    // QuickJS 2024-01 runs ES2023; es2022 keeps the source's syntax as written (no helpers, no downlevelling).
    target: 'es2022',
    globalName: REALM_SCRIPT,
    banner: { js: "(function () {\n'use strict';" },
    footer: { js: `return ${REALM_SCRIPT}.completion;\n})();` },
    sourcemap: false,
    clean: false,
    esbuildOptions: fromPackageDir,
  },
];

export default defineConfig([
  // dist/sandbox/ is written by the builds above, and the CommonJS build by the next, which run at the same time.
  // The API in ESM with its types, and `prewarm.js`, the light entry point (ADR 0149): esbuild's code splitting
  // puts the sandbox pool in a chunk both entries import, so the pool `prewarmSandbox` fills is the engine's.
  {
    entry: ['src/index.ts', 'src/prewarm.ts'],
    format: ['esm'],
    dts: true,
    clean: ['!sandbox/**', '!index.cjs', '!index.cjs.map', '!index.d.cts', '!prewarm.cjs', '!prewarm.d.cts'],
    sourcemap: true,
    shims: true,
  },
  // The API in CommonJS with its types (`shims`: import.meta.url). Without code splitting a bundled `prewarm.cjs`
  // would hold a pool of its own: the CommonJS `./prewarm` is written after this build by scripts/prewarm-cjs.mjs.
  {
    entry: ['src/index.ts'],
    format: ['cjs'],
    dts: true,
    clean: false,
    sourcemap: true,
    shims: true,
  },
  ...sandboxBuilds,
]);
