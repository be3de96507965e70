import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts', 'src/app.ts'],
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  // Private, never published: bundled in (ADR 0096).
  noExternal: ['@org/strict-json', '@org/http-problem', '@org/http-drain'],
});
