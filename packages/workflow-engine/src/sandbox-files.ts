import { access, readFile } from 'node:fs/promises';
import { EngineError } from './errors.js';

/**
 * The sandbox's built files (ADR 0050): `src/sandbox/` is built by tsup into `<package>/dist/sandbox/`. This URL
 * resolves to that folder both from `src/*.ts` (tests, benches) and from `dist/*.js` (the published package),
 * so the module holding it must stay directly in `src/` and be bundled directly into `dist/`.
 */
export const SANDBOX_DIST = new URL('../dist/sandbox/', import.meta.url);

/** The worker thread program (`src/sandbox/worker.ts`), started with `new Worker(url)`. */
export function sandboxWorkerUrl(dir: URL = SANDBOX_DIST): URL {
  return new URL('worker.js', dir);
}

/** The realm scripts every worker gets: the prelude, and the helper source the prelude compiles on first use. */
export interface SandboxScripts {
  prelude: string;
  utilSource: string;
}

/**
 * Reads the realm scripts and checks that the worker program is there (`sandbox.ts`: once per process).
 *
 * @throws EngineError `ENGINE_SANDBOX_FAILED` when the package was not built.
 */
export async function readSandboxScripts(dir: URL = SANDBOX_DIST): Promise<SandboxScripts> {
  try {
    const [prelude, utilSource] = await Promise.all([
      readFile(new URL('prelude.global.js', dir), 'utf8'),
      readFile(new URL('util.global.js', dir), 'utf8'),
      access(sandboxWorkerUrl(dir)),
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
