// One-off comparison of the shared parser against the two it replaced (their built dist/ from a checkout of the
// previous commit, paths given at the top). Ratios are new/old, median of 5 rounds, with the machine's load average.
// Run: node bench/vs-previous.mjs (after building both checkouts).
import { loadavg } from 'node:os';
const [oldF, oldC, newF, newC] = await Promise.all([
  import('/work/main/packages/oapp-format/dist/index.js'),
  import('/work/main/packages/workflow-compiler/dist/index.js'),
  import('/work/wt/oneofeach/packages/oapp-format/dist/index.js'),
  import('/work/wt/oneofeach/packages/workflow-compiler/dist/index.js'),
]);
const doc = { items: Array.from({ length: 4000 }, (_, i) => ({ id: i, name: `item ${i} é`, tags: ['a', 'b'], ok: i % 2 === 0, v: i * 1.5 })) };
const bytes = new TextEncoder().encode(JSON.stringify(doc));
const time = (fn) => { for (let i = 0; i < 5; i++) fn(); const t = performance.now(); for (let i = 0; i < 40; i++) fn(); return (performance.now() - t) / 40; };
const rounds = [];
for (let r = 0; r < 5; r++) rounds.push({
  oldFormat: time(() => oldF.parseStrictJson(bytes, { what: 'x', maxBytes: 1 << 24 })),
  newFormat: time(() => newF.parseStrictJson(bytes, { what: 'x', maxBytes: 1 << 24 })),
  oldCompiler: time(() => oldC.parseStrictJson(bytes)),
  newCompiler: time(() => newC.parseStrictJson(bytes)),
});
const med = (k) => rounds.map((r) => r[k]).sort((a, b) => a - b)[2];
console.log(`bytes=${bytes.length} load=${loadavg().map((x) => x.toFixed(1)).join(',')}`);
console.log(`format: new/old = ${(med('newFormat') / med('oldFormat')).toFixed(2)} (ms ${med('oldFormat').toFixed(2)} -> ${med('newFormat').toFixed(2)})`);
console.log(`compiler: new/old = ${(med('newCompiler') / med('oldCompiler')).toFixed(2)} (ms ${med('oldCompiler').toFixed(2)} -> ${med('newCompiler').toFixed(2)})`);
