// Log-line redaction cost (ADR 0054): the shared Redactor against the agent's previous implementation (one
// alternation regex, `text.replace`), measured in the same run on the same lines. A measurement, not a test.
//   npx tsx bench/redact.ts
import { createHash } from 'node:crypto';
import { Redactor } from '../src/index.js';

/** The agent's previous redactor (raw, Base64 forms, URL-encoded), kept here as the baseline. */
class PreviousRedactor {
  readonly #forms = new Set<string>();
  #pattern: RegExp | undefined;
  add(secret: string): void {
    const b64 = Buffer.from(secret).toString('base64');
    for (const f of [
      secret,
      encodeURIComponent(secret),
      b64,
      b64.replace(/=+$/, ''),
      Buffer.from(secret).toString('base64url'),
    ])
      if (f.length >= 4) this.#forms.add(f);
    this.#pattern = undefined;
  }
  redact(text: string): string {
    this.#pattern ??= new RegExp(
      [...this.#forms]
        .sort((a, b) => b.length - a.length)
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('|'),
      'g',
    );
    return text.replace(this.#pattern, '<REDACTED>');
  }
}

// Two families: values sharing a prefix (`secret-<n>-…`, where one alternation regex can skip ahead) and random
// tokens (base64url, fixed: derived from the index), as login responses and client secrets are.
const FAMILIES = {
  'shared prefix': (i: number) => `secret-${i}-${Buffer.from(String(i * 7919)).toString('hex')}xyz`,
  'random tokens': (i: number) => createHash('sha256').update(String(i)).digest('base64url').slice(0, 24),
} as const;
let secrets: string[] = [];
// Fresh strings for every measurement: V8 caches global-regexp results per subject string.
let serial = 0;
function lines(withSecrets: boolean, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const line = `request ${serial++} GET /v1/items/${i} answered 200 in ${i % 97} ms; {"user":"u-${i}","items":[1,2,3],"note":"nothing to hide here"}`;
    return withSecrets && i % 10 === 0 ? `${line} token ${secrets[i % secrets.length]!}` : line;
  });
}

/** Lines per second of `redact` over `input`. */
function measure(redact: (s: string) => string, input: string[]): number {
  const t = performance.now();
  let n = 0;
  for (const l of input) n += redact(l).length;
  if (n === 0) throw new Error('unreachable');
  return input.length / ((performance.now() - t) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

for (const [family, make] of Object.entries(FAMILIES)) {
  for (const count of [40, 4096]) {
    secrets = Array.from({ length: count }, (_, i) => make(i));
    const now = new Redactor();
    const before = new PreviousRedactor();
    for (const s of secrets) {
      now.add(s);
      before.add(s);
    }
    for (const [name, withSecrets] of [
      ['no secret in the line', false],
      ['1 line in 10 carries a secret', true],
    ] as const) {
      // Alternate the two, 9 times each (3 with 4 096 secrets), and compare medians: the machine is shared.
      const base: number[] = [];
      const mine: number[] = [];
      for (let i = 0; i < (count > 100 ? 3 : 9); i++) {
        base.push(measure((s) => before.redact(s), lines(withSecrets, count > 100 ? 2000 : 20_000)));
        mine.push(measure((s) => now.redact(s), lines(withSecrets, count > 100 ? 2000 : 20_000)));
      }
      const [b, m] = [median(base), median(mine)];
      console.log(
        `${family}, ${count} secrets, ${name}: previous ${(b / 1000).toFixed(1)}k lines/s, shared Redactor ${(m / 1000).toFixed(1)}k lines/s, ratio ${((m / b) * 100).toFixed(0)}%`,
      );
    }
  }
}
