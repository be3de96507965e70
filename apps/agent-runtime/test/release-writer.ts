// A separate writer process for release-store.test.ts: remembers `count` releases of package `x` in `dataDir`,
// sequence `first`, `first + step`, …, each after reading and checking against the remembered newest (as a start of
// the agent does; what this read accepted may be stale by the time it is written),
// then prints "done". Run with `node --import tsx test/release-writer.ts <dataDir> <first> <step> <count> [<start at, epoch ms>]`.
import { releaseStore } from '../src/startup/release-store.js';

const [dataDir, first, step, count, startAt] = process.argv.slice(2);
// Both writers begin together (after their slow start-up), so their writes interleave.
while (Date.now() < Number(startAt ?? 0)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
const sha = (n: number): string => n.toString(16).padStart(64, '0');
for (let i = 0; i < Number(count); i++) {
  const store = releaseStore(dataDir);
  const before = store.newest('x');
  const sequence = Number(first) + i * Number(step);
  // As the agent's check: an older release is refused (POLICY_ROLLBACK), so nothing is written for it.
  if (before !== undefined && sequence < before.sequence) continue;
  // The agent opens the package between its check and the write: the other writer may write meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
  store.remember('x', { sequence, contentSha256: sha(sequence) }, `writer-${first}`);
}
process.stdout.write('done\n');
