// Issue 27 §2: no shell script of the repository pipes into an early reader under pipefail (SIGPIPE makes such a
// pipeline fail at random although it matched).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pipefailHazards } from '../src/pipefail.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Every tracked shell script: `*.sh`, `.ci/run`, and files whose first line is a shell shebang. */
function scripts(): string[] {
  const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  return files.filter((f) => {
    if (f.endsWith('.sh') || f === '.ci/run') return true;
    if (f.includes('node_modules/') || /\.(ts|js|mjs|cjs|json|md|yaml|yml)$/.test(f)) return false;
    try {
      return /^#!.*\b(ba|da|z)?sh\b/.test(readFileSync(join(ROOT, f), 'utf8').slice(0, 80));
    } catch {
      return false;
    }
  });
}

describe('shell scripts under pipefail', () => {
  it('the check finds `… | grep -q`, `grep -m1` and `head` pipelines, and only in pipefail scripts', () => {
    const on = 'set -euo pipefail\n';
    expect(pipefailHazards(`${on}podman logs x | grep -q y || fail`)).toEqual([
      { line: 2, text: 'podman logs x | grep -q y || fail' },
    ]);
    expect(pipefailHazards(`${on}ss -ltn | awk '{print $4}' | grep -qE ':80$'`)).toHaveLength(1);
    expect(pipefailHazards(`${on}a | grep -m1 b\nc | head -n 1\n`)).toHaveLength(2);
    expect(pipefailHazards(`${on}a | grep -c b\n# a | grep -q b\ngrep -q b file`)).toEqual([]);
    expect(pipefailHazards('set -eu\na | grep -q b')).toEqual([]);
  });

  it('no script of the repository has such a pipeline', () => {
    const found = scripts().flatMap((f) =>
      pipefailHazards(readFileSync(join(ROOT, f), 'utf8')).map((h) => `${f}:${h.line}: ${h.text}`),
    );
    expect(scripts()).toContain('scripts/container-smoke.sh');
    expect(found).toEqual([]);
  });
});
