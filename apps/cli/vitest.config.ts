import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'cli',
    include: ['test/**/*.test.ts'],
    setupFiles: ['@org/test-utils/setup'],
    // Every test runs the built command line as child processes (about 0.3–0.7 s each on a loaded machine).
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
