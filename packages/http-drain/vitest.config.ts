import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'http-drain', include: ['test/**/*.test.ts'], setupFiles: ['@org/test-utils/setup'] },
});
