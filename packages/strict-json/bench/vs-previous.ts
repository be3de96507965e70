// One-off comparison of the shared parser against the two it replaced: OLD_ROOT is a built checkout of a commit
// before the change; this checkout must be built too. Ratios are new/old, median of 5 rounds, with the load average.
// Run: OLD_ROOT=<path to the old checkout> pnpm exec tsx packages/strict-json/bench/vs-previous.ts
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const oldRoot = process.env['OLD_ROOT'];
if (oldRoot === undefined) throw new Error('set OLD_ROOT to a built checkout from before the change');
const newRoot = join(import.meta.dirname, '..', '..', '..');
interface Parsers {
  parseStrictJson(bytes: Uint8Array, options?: object): unknown;
}
const dist = (root: string, pkg: string): Promise<Parsers> =>
  import(pathToFileURL(join(root, 'packages', pkg, 'dist', 'index.js')).href);
const [oldF, oldC, newF, newC] = await Promise.all([
  dist(oldRoot, 'oapp-format'),
  dist(oldRoot, 'workflow-compiler'),
  dist(newRoot, 'oapp-format'),
  dist(newRoot, 'workflow-compiler'),
]);
const doc = {
  items: Array.from({ length: 4000 }, (_, i) => ({
    id: i,
    name: `item ${i} é`,
    tags: ['a', 'b'],
    ok: i % 2 === 0,
    v: i * 1.5,
  })),
};
const bytes = new TextEncoder().encode(JSON.stringify(doc));
const time = (fn: () => unknown): number => {
  for (let i = 0; i < 5; i++) fn();
  const t = performance.now();
  for (let i = 0; i < 40; i++) fn();
  return (performance.now() - t) / 40;
};
const rounds: Record<'oldFormat' | 'newFormat' | 'oldCompiler' | 'newCompiler', number>[] = [];
for (let r = 0; r < 5; r++)
  rounds.push({
    oldFormat: time(() => oldF.parseStrictJson(bytes, { what: 'x', maxBytes: 1 << 24 })),
    newFormat: time(() => newF.parseStrictJson(bytes, { what: 'x', maxBytes: 1 << 24 })),
    oldCompiler: time(() => oldC.parseStrictJson(bytes)),
    newCompiler: time(() => newC.parseStrictJson(bytes)),
  });
const med = (k: 'oldFormat' | 'newFormat' | 'oldCompiler' | 'newCompiler'): number =>
  rounds.map((r) => r[k]).sort((a, b) => a - b)[2]!;
console.log(
  `bytes=${bytes.length} load=${loadavg()
    .map((x) => x.toFixed(1))
    .join(',')}`,
);
console.log(
  `format: new/old = ${(med('newFormat') / med('oldFormat')).toFixed(2)} (ms ${med('oldFormat').toFixed(2)} -> ${med('newFormat').toFixed(2)})`,
);
console.log(
  `compiler: new/old = ${(med('newCompiler') / med('oldCompiler')).toFixed(2)} (ms ${med('oldCompiler').toFixed(2)} -> ${med('newCompiler').toFixed(2)})`,
);
