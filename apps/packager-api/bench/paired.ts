// Paired A/B of `/string-encrypt` between two builds of the service: each round loads A and B in turn (the order
// alternates), and the server CPU per request of each is taken from /proc. Printed: every round, the medians and
// the median of the per-round differences, with the load average (README.md, round three).
//   pnpm exec tsx bench/paired.ts <A dist/main.js> <B dist/main.js>     (BENCH_ROUNDS, BENCH_DURATION_S)
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { stringEncryptRequest } from './fixtures.js';
import { cpuSeconds, startChild } from './processes.js';

const [MAIN_A, MAIN_B] = process.argv.slice(2);
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 10));
const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 3);
const CONNECTIONS = 16;

function start(main: string, resources: string): Promise<{ child: ChildProcess; port: number }> {
  return startChild([main], {
    PORT: '0',
    PACKAGER_BIND_ADDRESS: '127.0.0.1',
    PACKAGER_RESOURCE_DIRS: resources,
  });
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  if (MAIN_A === undefined || MAIN_B === undefined)
    throw new Error('usage: paired.ts <A main.js> <B main.js>');
  const resources = mkdtempSync(join(os.tmpdir(), 'bench-res-'));
  const servers = [await start(MAIN_A, resources), await start(MAIN_B, resources)];
  try {
    const s = stringEncryptRequest();
    const opts = (port: number): autocannon.Options => ({
      url: `http://127.0.0.1:${port}/string-encrypt`,
      method: 'POST',
      headers: { 'content-type': s.contentType, accept: 'text/plain' },
      body: s.payload,
      connections: CONNECTIONS,
    });
    for (const sv of servers) await autocannon({ ...opts(sv.port), duration: 2 });
    const us: [number[], number[]] = [[], []];
    for (let round = 0; round < ROUNDS; round++) {
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const sv = servers[i]!;
        const cpu0 = cpuSeconds(sv.child.pid);
        const r = await autocannon({ ...opts(sv.port), duration: DURATION_S });
        if (r.errors + r.timeouts + r.non2xx > 0) throw new Error(`errors from ${i === 0 ? 'A' : 'B'}`);
        us[i as 0 | 1].push(((cpuSeconds(sv.child.pid) - cpu0) * 1e6) / r.requests.total);
      }
      const load = os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ');
      console.log(
        `round ${round + 1}/${ROUNDS} (load ${load}): A ${us[0].at(-1)!.toFixed(0)} us, B ${us[1].at(-1)!.toFixed(0)} us per request`,
      );
    }
    const diffs = us[0].map((a, i) => us[1][i]! - a);
    const ratios = us[0].map((a, i) => a / us[1][i]!);
    console.log(
      `server CPU per /string-encrypt request, median: A ${median(us[0]).toFixed(0)} us, B ${median(us[1]).toFixed(0)} us;` +
        ` median of per-round B - A ${median(diffs).toFixed(1)} us; A/B ${(100 * median(ratios)).toFixed(1)}%;` +
        ` A lower in ${diffs.filter((d) => d > 0).length} of ${ROUNDS} rounds`,
    );
  } finally {
    for (const sv of servers) sv.child.kill('SIGTERM');
  }
}

await main();
