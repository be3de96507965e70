import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'oapp-format', include: ['test/**/*.test.ts'], setupFiles: ['@org/test-utils/setup'] },
});
