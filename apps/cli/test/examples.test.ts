import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { oapp } from './helpers.js';

// The repository's examples/ run in CI through `oapp test`, exactly as their READMEs tell a user to run them.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const EXAMPLES = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

describe('examples/ through oapp test', () => {
  it('there are examples to run', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(3);
  });

  it.each(EXAMPLES)('examples/%s: every test passes', async (name) => {
    const r = await oapp(['test', `examples/${name}/testrunner.config.json`], { cwd: ROOT });
    expect(r.stderr).toBe('');
    const last = r.out.trimEnd().split('\n').at(-1) ?? '';
    expect(last, r.out).toMatch(/^[1-9]\d* passed, 0 failed, 0 skipped$/);
    expect(r.code).toBe(0);
  });
});
