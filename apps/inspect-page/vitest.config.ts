import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'inspect-page',
    include: ['test/**/*.test.ts'],
    setupFiles: ['@org/test-utils/setup'],
    // The browser tests start Chromium and read a 100 MiB package: each sets its own timeout.
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
