import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'packager-app', include: ['test/**/*.test.ts'] },
});
