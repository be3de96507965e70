import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Modules given to node's `--import` by the tests of the command line and the agent: written into a test's
// directory, they report to a file, when the process exits, what it loaded or started. Each writer returns the
// environment that makes a process load its probe and report to the file `out`.

/**
 * The ajv probe (`ajv-probe.mjs` in `dir`): writes, when the process exits, every ajv module in the CommonJS module
 * cache (where node also keeps the CommonJS modules that ES modules import), as a JSON list.
 */
export function writeAjvProbe(dir: string): (out: string) => { NODE_OPTIONS: string; AJV_PROBE_OUT: string } {
  const probe = join(dir, 'ajv-probe.mjs');
  writeFileSync(
    probe,
    `import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
const cache = createRequire(import.meta.url).cache;
process.on('exit', () => {
  const loaded = Object.keys(cache).filter((k) => /[\\\\/]ajv[\\\\/]dist[\\\\/]/.test(k));
  writeFileSync(process.env.AJV_PROBE_OUT, JSON.stringify(loaded));
});
`,
  );
  return (out) => ({ NODE_OPTIONS: `--import=${pathToFileURL(probe).href}`, AJV_PROBE_OUT: out });
}

/**
 * The sandbox workers probe (`workers-probe.mjs` in `dir`): writes, when the main thread exits, the engine's count
 * of started sandbox workers. The engine is the ESM build of @org/workflow-engine as the package at `appDir`
 * resolves it, the one that package imports: the same module (`require.resolve` would give the CommonJS one).
 */
export function writeWorkersProbe(
  dir: string,
  appDir: string,
): (out: string) => { NODE_OPTIONS: string; WORKERS_PROBE_OUT: string } {
  const engine = join(
    dirname(createRequire(join(appDir, 'package.json')).resolve('@org/workflow-engine/package.json')),
    'dist',
    'index.js',
  );
  const probe = join(dir, 'workers-probe.mjs');
  writeFileSync(
    probe,
    `import { isMainThread } from 'node:worker_threads';
import { writeFileSync } from 'node:fs';
if (isMainThread) {
  const { sandboxWorkersStarted } = await import(${JSON.stringify(pathToFileURL(engine).href)});
  process.on('exit', () => writeFileSync(process.env.WORKERS_PROBE_OUT, String(sandboxWorkersStarted())));
}
`,
  );
  return (out) => ({ NODE_OPTIONS: `--import=${pathToFileURL(probe).href}`, WORKERS_PROBE_OUT: out });
}
