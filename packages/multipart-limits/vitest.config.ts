import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'multipart-limits', include: ['test/**/*.test.ts'], setupFiles: ['@org/test-utils/setup'] },
});
