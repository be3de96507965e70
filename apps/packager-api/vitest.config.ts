import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'packager-api',
    include: ['test/**/*.test.ts'],
    setupFiles: ['@org/test-utils/setup'],
  },
});
