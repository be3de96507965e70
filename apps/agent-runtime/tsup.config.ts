import { defineConfig } from 'tsup';

/**
 * Packages the agent imports at run time from `node_modules` instead of carrying them in `dist/` (ADR 0149,
 * "Bundling"): each finds files or modules next to its own `dist/` or loads a native addon.
 * - `@org/workflow-engine` (and `./prewarm`): its sandbox worker program, realm scripts and QuickJS wasm are
 *   found relative to its own files; lmdb and msgpackr load native addons. One sandbox pool: the entry point
 *   and the rest of the agent import the same engine.
 * - `@org/envelope-crypto`: loads `sodium-native` with `createRequire(import.meta.url)`.
 * - `@org/workflow-compiler`, `@org/packager`: load `ajv` with `createRequire(import.meta.url)` on first use.
 * Every one is a dependency of the agent, so the bare import resolves from `dist/`. The rest (the workflow
 * runtime, the package format, prom-client, …) is pure JavaScript and is bundled: the agent loads a few files
 * before it listens instead of a few hundred.
 */
const RUNTIME_EXTERNAL = [
  '@org/workflow-engine',
  '@org/envelope-crypto',
  '@org/workflow-compiler',
  '@org/packager',
] as const;

// Any bare import but the packages above (built-ins match too: on `platform: node` esbuild leaves them imports).
const BUNDLED = new RegExp(`^(?!(${RUNTIME_EXTERNAL.join('|').replaceAll('/', '\\/')})(\\/|$))[^./]`);

export default defineConfig({
  entry: ['src/main.ts', 'src/app.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  // tsup's `noExternal` wins over `external`: bundle every bare import except the list above.
  noExternal: [BUNDLED],
  // CommonJS dependencies (prom-client, yauzl, mime-types) call `require` for Node's built-in modules.
  banner: {
    js: "import { createRequire as __agentCreateRequire } from 'node:module'; const require = __agentCreateRequire(import.meta.url);",
  },
});
