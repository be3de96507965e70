import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'envelope-crypto', include: ['test/**/*.test.ts'], setupFiles: ['@org/test-utils/setup'] },
});
