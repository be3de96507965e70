import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'workflow-runtime',
    include: ['test/**/*.test.ts'],
    setupFiles: ['@org/test-utils/setup'],
  },
});
