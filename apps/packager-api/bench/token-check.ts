// S174 timing measurement (ADR 0140), never a test: the caller check's time for tokens that are right but for their
// last byte, wrong from the first byte, right, and of another length, over 10,000 tries each, interleaved in
// rounds so a change of machine load hits every class alike. Printed: the median ns per check of each class, the
// ratio of each to the "wrong from the first byte" baseline of the same round (median over rounds), and the load.
//   pnpm --filter @org/packager-api exec tsx bench/token-check.ts     (BENCH_TRIES, BENCH_ROUNDS)
import * as os from 'node:os';
import { createTokenCheck, newCallerToken, parseTokenHashes } from '@org/packager';

const TRIES = Math.max(1, Number(process.env['BENCH_TRIES'] ?? 10_000));
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 7));

const tokens = Array.from({ length: 8 }, (_, i) => newCallerToken(['inspect'], `t${i}`));
const check = createTokenCheck(parseTokenHashes(tokens.map((t) => t.record).join('\n')));
const target = tokens[5]!.token;
const flip = (t: string, at: number) => t.slice(0, at) + (t[at] === 'A' ? 'B' : 'A') + t.slice(at + 1);

const classes: Record<string, string> = {
  'wrong first byte': flip(target, 0),
  'wrong last byte': flip(target, target.length - 1),
  'right (scope held)': target,
  'other length': target + 'x',
};

function time(header: string): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < TRIES; i++) {
    try {
      check.authorize(header, 'workflow-hash');
    } catch {
      // refused: the time is what counts
    }
  }
  return Number(process.hrtime.bigint() - t0) / TRIES;
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const names = Object.keys(classes);
const perClass: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const ratios: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (const n of names) time(`Bearer ${classes[n]}`); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const order = names.map((_, i) => names[(i + r) % names.length]!);
  const round: Record<string, number> = {};
  for (const n of order) round[n] = time(`Bearer ${classes[n]}`);
  for (const n of names) {
    perClass[n]!.push(round[n]!);
    ratios[n]!.push(round[n]! / round['wrong first byte']!);
  }
}
console.log(
  `load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; ${TRIES} tries × ${ROUNDS} rounds, 8 records`,
);
for (const n of names)
  console.log(
    `${n.padEnd(20)} ${median(perClass[n]!).toFixed(0).padStart(6)} ns/check   ratio ${median(ratios[n]!).toFixed(3)}`,
  );
