// Cost of scrubbing the response of a main call (ADR 0068) against the UTF-8 decode the engine already does for
// every response (`getBody()`), measured in the same run on the same bodies. A measurement, not a test.
//   npx tsx bench/response-scrub.ts
import { createHash } from 'node:crypto';
import { Redactor } from '../src/index.js';
import { SecretSet } from '../src/redact.js';
import { scrubResponse } from '../src/response-scrub.js';

const utf8 = new TextDecoder('utf-8');

/** Token-like secrets with no common prefix (fixed: derived from the index). */
const secret = (i: number): string => createHash('sha256').update(String(i)).digest('base64url').slice(0, 24);

function secretSet(n: number): SecretSet {
  const set = new SecretSet(new Redactor(), () => undefined);
  for (let i = 0; i < n; i++) set.add(secret(i));
  return set;
}

/** A JSON body of about `bytes` bytes; fresh per call (V8 caches regexp results per subject string). */
let serial = 0;
function body(bytes: number, withSecret: boolean): Uint8Array {
  const rows: string[] = [];
  for (let n = 0; n < bytes; n += 90)
    rows.push(`{"id":${serial++},"name":"item ${n}","tags":["a","b"],"note":"nothing to hide here at all"}`);
  if (withSecret) rows.push(`{"echo":"Bearer ${secret(3)}"}`);
  return new TextEncoder().encode(`[${rows.join(',')}]`);
}

/** MiB per second of `f` over `inputs`. */
function measure(f: (b: Uint8Array) => unknown, inputs: Uint8Array[]): number {
  const t = performance.now();
  let total = 0;
  for (const b of inputs) {
    f(b);
    total += b.byteLength;
  }
  return total / 1024 / 1024 / ((performance.now() - t) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

for (const secrets of [40, 4096]) {
  const set = secretSet(secrets);
  for (const [size, count] of [
    [64 * 1024, 200],
    [1024 * 1024, 12],
  ] as const) {
    for (const withSecret of [false, true]) {
      const base: number[] = [];
      const mine: number[] = [];
      // Alternate the two, 7 times each, and compare medians: the machine is shared and noisy.
      for (let i = 0; i < 7; i++) {
        const inputs = Array.from({ length: count }, () => body(size, withSecret));
        base.push(measure((b) => utf8.decode(b), inputs));
        mine.push(measure((b) => scrubResponse(set, { status: 200, headers: {}, body: b }, 'api'), inputs));
      }
      const [b, m] = [median(base), median(mine)];
      console.log(
        `${secrets} secrets, ${size / 1024} KiB body${withSecret ? ' with an echo' : ''}: decode ${b.toFixed(0)} MiB/s, scrub ${m.toFixed(0)} MiB/s, scrub takes ${(b / m).toFixed(1)}x a decode (median of 7)`,
      );
    }
  }
}

// A hostile upstream: 4 096 registered `Bearer <token>` header values (all one prefix) and a body made of
// `Bearer ` and near-misses, so that every few characters the index has to look further.
{
  const set = new SecretSet(new Redactor(), () => undefined);
  for (let i = 0; i < 4096; i++) set.add(`Bearer ${secret(i)}`);
  const flood = (): Uint8Array =>
    new TextEncoder().encode(
      Array.from({ length: 80_000 }, (_, i) => `Bearer ${secret(i).slice(0, 5)}`).join(' '),
    );
  const base: number[] = [];
  const mine: number[] = [];
  for (let i = 0; i < 5; i++) {
    const inputs = [flood(), flood()];
    base.push(measure((b) => utf8.decode(b), inputs));
    mine.push(measure((b) => scrubResponse(set, { status: 200, headers: {}, body: b }, 'api'), inputs));
  }
  const [b, m] = [median(base), median(mine)];
  console.log(
    `4096 Bearer values, 1 MiB body of "Bearer " near-misses: decode ${b.toFixed(0)} MiB/s, scrub ${m.toFixed(1)} MiB/s, scrub takes ${(b / m).toFixed(1)}x a decode (median of 5)`,
  );
}
