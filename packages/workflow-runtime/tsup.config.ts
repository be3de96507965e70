import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  // Private, never published: bundled in (ADR 0096).
  noExternal: ['@org/strict-json', '@org/http-problem'],
});
