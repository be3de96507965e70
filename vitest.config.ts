import { defineConfig } from 'vitest/config';
import projects from './vitest.workspace.js';

export default defineConfig({
  test: {
    projects,
    // summary-reporter prints the `N passed, N failed` closing line CI reads; keep it last.
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
