import { defineConfig } from 'tsup';

// The Node side: the handler that serves dist/inspect.html (written by scripts/build.mjs first, kept: no clean).
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  dts: true,
  clean: false,
  sourcemap: true,
});
