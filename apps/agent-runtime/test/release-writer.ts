// A separate writer process for release-store.test.ts: remembers `count` releases of package `x` in `dataDir`,
// sequence `first`, `first + step`, …, each after reading the remembered newest (as a start of the agent does),
// then prints "done". Run with `node --import tsx test/release-writer.ts <dataDir> <first> <step> <count>`.
import { releaseStore } from '../src/startup/release-store.js';

const [dataDir, first, step, count] = process.argv.slice(2);
const sha = (n: number): string => n.toString(16).padStart(64, '0');
for (let i = 0; i < Number(count); i++) {
  const store = releaseStore(dataDir);
  store.newest('x');
  const sequence = Number(first) + i * Number(step);
  store.remember('x', { sequence, contentSha256: sha(sequence) }, `writer-${first}`);
}
process.stdout.write('done\n');
