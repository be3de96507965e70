import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'host-policy', include: ['test/**/*.test.ts'], setupFiles: ['@org/test-utils/setup'] },
});
