#!/usr/bin/env node
// The `oapp` binary. A committed file, not dist/main.js itself: pnpm links a workspace package's bin into
// node_modules/.bin only if the file exists at install time, and in a fresh clone `pnpm install` runs before the
// build. So `pnpm exec oapp` works at the repository root once `pnpm build` has made dist/main.js.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'oapp: not built yet (no dist/main.js): run `pnpm --filter @org/cli... build` at the repository root\n',
  );
  process.exit(1);
}
await import(main.href);
