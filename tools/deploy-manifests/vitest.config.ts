import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'deploy-manifests', include: ['test/**/*.test.ts'] },
});
