// Writes the CommonJS `@org/workflow-engine/prewarm` after tsup (ADR 0149): two lines that re-export the main
// CommonJS entry's `prewarmSandbox`, so CommonJS callers fill the pool the engine they require uses. A bundled
// `prewarm.cjs` would hold a pool of its own (tsup splits only ESM). Not light: it loads the whole engine.
import { writeFileSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
const note = "// @org/workflow-engine/prewarm for CommonJS: the main entry's sandbox pool (ADR 0149).\n";
writeFileSync(
  new URL('prewarm.cjs', dist),
  `'use strict';\n${note}module.exports = { prewarmSandbox: require('./index.cjs').prewarmSandbox };\n`,
);
writeFileSync(new URL('prewarm.d.cts', dist), `${note}export { prewarmSandbox } from './index.cjs';\n`);
