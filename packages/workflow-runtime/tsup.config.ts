import { defineConfig } from 'tsup';

// ESM and CommonJS (require(esm) of the ESM-only dependencies needs Node >= 20.19 / 22.12), each with its types.
// `internal` is the unstable subpath export (README "Internal API"); shared code is split into chunks so that
// both entries see one copy of each class.
export default defineConfig({
  entry: { index: 'src/index.ts', internal: 'src/internal.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  shims: true,
  splitting: true,
  // Private, never published: bundled in (ADR 0096).
  noExternal: ['@org/strict-json', '@org/http-problem', '@org/http-drain'],
});
