import { createRequire } from 'node:module';

/** The version of `@org/cli` (package.json sits one directory above `dist/` and `src/`). */
export const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** What `oapp --version`, `oapp -v` and `oapp version` print. */
export const VERSION_TEXT = `oapp ${VERSION} (package format oapp/v2; reads oapp/v1)`;
