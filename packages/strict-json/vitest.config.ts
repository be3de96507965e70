import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'strict-json', include: ['test/**/*.test.ts'], setupFiles: ['@org/test-utils/setup'] },
});
