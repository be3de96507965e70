import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'test-utils', include: ['test/**/*.test.ts'], setupFiles: ['./src/setup.ts'] },
});
