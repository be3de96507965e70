// Decisions per second for 50 hosts x 20 allowList entries, beside bare `new URL()` parses in the same run.
// Run: pnpm --filter @org/host-policy bench. Never part of CI.
import type { HostEntry, OutboundCall } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy } from '../src/index.js';

const HOSTS = 50;
const ENTRIES = 20;
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'];

function makeHosts(): HostEntry[] {
  return Array.from({ length: HOSTS }, (_, h) => ({
    id: `host-${h}`,
    host: `https://api${h}.example.com/v1/`,
    headers: { Authorization: `Bearer token-${h}`, 'X-Tenant': 'eu-1' },
    allowList: Array.from({ length: ENTRIES }, (_, e) => ({
      method: METHODS[e % METHODS.length]!,
      uriPattern: `/v1/resource${e}/[0-9]{1,12}(?:/items/[a-z0-9-]{1,64})?`,
    })),
  }));
}

function makeCalls(n: number): OutboundCall[] {
  const calls: OutboundCall[] = [];
  for (let i = 0; i < n; i++) {
    const h = (i * 7) % HOSTS;
    const e = (i * 13) % ENTRIES;
    const kind = i % 4;
    const method = METHODS[e % METHODS.length]!;
    const path =
      kind === 0
        ? `resource${e}/${1000 + i}/items/abc-${i}`
        : kind === 1
          ? `/resource${e}/${i}?page=2&sort=name`
          : kind === 2
            ? `resource${e}/not-a-number` // denied by the allowList after trying every entry of the method
            : `resource${e}/${i}/../../admin`; // denied by the path scan
    calls.push({ hostId: `host-${h}`, path, method, headers: { 'X-Request-Id': `req-${i}` } });
  }
  return calls;
}

function measure(label: string, fn: (i: number) => unknown, minMs = 1500): number {
  for (let i = 0; i < 50_000; i++) fn(i); // warm-up
  let ops = 0;
  let sink = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 10_000; i++) if (fn(ops + i)) sink++;
    ops += 10_000;
    elapsed = performance.now() - t0;
  }
  const perSec = (ops / elapsed) * 1000;
  console.log(
    `${label.padEnd(34)} ${Math.round(perSec).toLocaleString('en-US').padStart(12)} /s  (sink ${sink % 10})`,
  );
  return perSec;
}

const policy = compileHostPolicy(makeHosts());
const calls = makeCalls(4096);
const urls = calls.map((c) => `https://api${c.hostId.slice(5)}.example.com/v1/${c.path.replace(/^\//, '')}`);
let allowedCount = 0;
for (const c of calls) if (checkOutboundCall(policy, c).allowed) allowedCount++;

console.log(
  `policy: ${HOSTS} hosts x ${ENTRIES} allowList entries; ${calls.length} calls, ${allowedCount} allowed`,
);
console.log(`node ${process.version}`);
const decisions = measure(
  'checkOutboundCall decisions',
  (i) => checkOutboundCall(policy, calls[i & 4095]!).allowed,
);
const parses = measure('new URL() parses', (i) => new URL(urls[i & 4095]!).pathname.length > 0);
console.log(`ratio decisions / URL parses: ${(decisions / parses).toFixed(2)}`);
console.log(`target >= 500,000 decisions/s: ${decisions >= 500_000 ? 'met' : 'NOT met'}`);
