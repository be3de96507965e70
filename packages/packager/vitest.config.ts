import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'packager', include: ['test/**/*.test.ts'], setupFiles: ['@org/test-utils/setup'] },
});
