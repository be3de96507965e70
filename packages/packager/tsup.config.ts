import { defineConfig } from 'tsup';

// ESM and CommonJS (require(esm) of the ESM-only dependencies needs Node >= 20.19 / 22.12), each with its types.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  shims: true,
  // Private, never published: bundled in (ADR 0096).
  noExternal: ['@org/strict-json', '@org/http-problem'],
});
