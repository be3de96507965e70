// Section (c) runs its children as plain JavaScript in a bare `node` process, as a deployment
// does: a tsx-loaded child carries the loader's worker thread and esbuild (about 40 MiB of
// resident memory that is no part of the library). This transpiles src/ and the child scripts
// with the repository's TypeScript into node_modules/.cache (removed after the run); imports
// of @org/envelope-crypto resolve, as always, to that package's built dist/.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { BENCH_DIR, PACKAGE_DIR } from './common.js';

export const BUILD_DIR = join(PACKAGE_DIR, 'node_modules', '.cache', 'oapp-bench');
const BENCH_FILES = ['common.ts', 'files.ts', 'open-child.ts', 'make-child.ts', 'stream-child.ts'];

function transpile(from: string, to: string): void {
  const out = ts.transpileModule(readFileSync(from, 'utf8'), {
    fileName: from,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
  });
  mkdirSync(dirname(to), { recursive: true });
  writeFileSync(to, out.outputText);
}

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
}

/** Transpiles src/ and the child scripts; returns the directory holding bench/*.js. */
export function buildChildren(): string {
  rmSync(BUILD_DIR, { recursive: true, force: true });
  mkdirSync(BUILD_DIR, { recursive: true });
  writeFileSync(join(BUILD_DIR, 'package.json'), '{ "type": "module", "private": true }\n');
  const src = join(PACKAGE_DIR, 'src');
  for (const f of tsFilesUnder(src))
    transpile(join(src, f), join(BUILD_DIR, 'src', f.replace(/\.ts$/, '.js')));
  for (const f of BENCH_FILES) {
    transpile(join(BENCH_DIR, f), join(BUILD_DIR, 'bench', f.replace(/\.ts$/, '.js')));
  }
  return join(BUILD_DIR, 'bench');
}

export function removeChildren(): void {
  rmSync(BUILD_DIR, { recursive: true, force: true });
}
