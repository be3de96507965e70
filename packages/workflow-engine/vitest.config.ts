import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'workflow-engine',
    include: ['test/**/*.test.ts'],
    setupFiles: ['@org/test-utils/setup'],
    // Builds dist/sandbox/ when it is missing or stale (ADR 0050).
    globalSetup: ['./test/build-sandbox.ts'],
  },
});
