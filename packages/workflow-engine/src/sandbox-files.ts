import { access, readFile } from 'node:fs/promises';
import { EngineError } from './errors.js';

/**
 * The sandbox's built files (ADR 0050): `src/sandbox/` is built by tsup into `<package>/dist/sandbox/`. This URL
 * resolves to that folder both from `src/*.ts` (tests, benches) and from `dist/*.js` (the published package),
 * so the module holding it must stay directly in `src/` and be bundled directly into `dist/`.
 */
const SANDBOX_DIST = new URL('../dist/sandbox/', import.meta.url);

/** The worker thread program (`src/sandbox/worker.ts`), started with `new Worker(SANDBOX_WORKER_URL)`. */
export const SANDBOX_WORKER_URL = new URL('worker.js', SANDBOX_DIST);

/** The realm scripts every worker gets: the prelude, and the helper source the prelude compiles on first use. */
export interface SandboxScripts {
  prelude: string;
  utilSource: string;
}

const PRELUDE_URL = new URL('prelude.global.js', SANDBOX_DIST);
const UTIL_URL = new URL('util.global.js', SANDBOX_DIST);

/**
 * Reads the realm scripts and checks that the worker program is there (once per process: `sandbox.ts`).
 *
 * @throws EngineError `ENGINE_SANDBOX_FAILED` when the package was not built.
 */
export async function readSandboxScripts(): Promise<SandboxScripts> {
  try {
    const [prelude, utilSource] = await Promise.all([
      readFile(PRELUDE_URL, 'utf8'),
      readFile(UTIL_URL, 'utf8'),
      access(SANDBOX_WORKER_URL),
    ]);
    return { prelude, utilSource };
  } catch (cause) {
    const missing = (cause as { code?: unknown }).code === 'ENOENT';
    throw new EngineError(
      'ENGINE_SANDBOX_FAILED',
      missing
        ? 'the sandbox is not built (dist/sandbox/ of @org/workflow-engine is missing): run `pnpm build` in packages/workflow-engine'
        : 'the sandbox files in dist/sandbox/ of @org/workflow-engine could not be read',
      { cause },
    );
  }
}
