import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import projects from './vitest.workspace.js';

export default defineConfig({
  test: {
    projects,
    // At least two test files at a time, also on a 2-core machine where vitest's default (cores − 1) is one: most
    // files wait on child processes, servers and the network, and CI must stay under 15 minutes (ADR 0150).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // summary-reporter prints the `N passed, N failed` closing line CI reads; keep it last.
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
