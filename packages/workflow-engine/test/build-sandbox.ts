// vitest globalSetup: the engine loads its sandbox from dist/sandbox/ (ADR 0050), also when tests import src/.
// Builds it (esbuild through tsup, no declarations: well under a second) when a built file is missing or older
// than any source of the sandbox, so `vitest run` works right after a checkout or an edit without `pnpm build`.
import { readdir, stat } from 'node:fs/promises';
import { build } from 'tsup';
import { sandboxBuilds } from '../tsup.config.js';

const pkg = new URL('../', import.meta.url);
const OUTPUTS = ['worker.js', 'prelude.global.js', 'util.global.js'];

async function mtime(url: URL): Promise<number> {
  try {
    return (await stat(url)).mtimeMs;
  } catch {
    return -Infinity;
  }
}

async function newestSource(): Promise<number> {
  const dir = new URL('src/sandbox/', pkg);
  const files = (await readdir(dir, { recursive: true })).map((f) => new URL(f, dir));
  const times = await Promise.all([...files, new URL('tsup.config.ts', pkg)].map(mtime));
  return Math.max(...times);
}

export async function setup(): Promise<void> {
  const built = await Promise.all(OUTPUTS.map((f) => mtime(new URL(`dist/sandbox/${f}`, pkg))));
  if (Math.min(...built) >= (await newestSource())) return;
  // config: false — use exactly these options, never a tsup config found in the working directory.
  await Promise.all(sandboxBuilds.map((options) => build({ ...options, config: false, silent: true })));
}
