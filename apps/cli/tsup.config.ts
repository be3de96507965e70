import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts'],
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  // `oapp` runs as an executable (package.json `bin`).
  banner: { js: '#!/usr/bin/env node' },
});
