import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isExampleTestBlock, readmeBlocks, ROOT, runBlocks } from './readme-blocks.js';

// The repository's examples/ run in CI through `oapp test`, exactly as their READMEs tell a user to run them: each
// example README's "Run the tests" block, as written (`pnpm exec oapp test …` at the repository root, which depends
// on @org/cli), in bash. examples/README.md lists the same commands.

const EXAMPLES = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const BLOCKS = readmeBlocks().filter(isExampleTestBlock);
const blockOf = (name: string) => BLOCKS.find((b) => b.file === `examples/${name}/README.md`);

describe('examples/ through oapp test, as their READMEs say', () => {
  it('there are examples to run, each README with its block, and examples/README.md lists the same commands', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(3);
    for (const name of EXAMPLES) expect(blockOf(name)?.body, name).toBeDefined();
    const listed = BLOCKS.filter((b) => b.file === 'examples/README.md').flatMap((b) => b.body.split('\n'));
    expect(listed.sort()).toEqual(EXAMPLES.map((name) => blockOf(name)!.body).sort());
  });

  it.each(EXAMPLES)(
    'examples/%s: the README block runs every test, and every test passes',
    async (name) => {
      const r = await runBlocks([blockOf(name)!.body], { timeoutMs: 40_000 });
      expect(r.stderr).toBe('');
      const last = r.stdout.trimEnd().split('\n').at(-1) ?? '';
      expect(last, r.stdout).toMatch(/^[1-9]\d* passed, 0 failed, 0 skipped$/);
      expect(r.code).toBe(0);
    },
    // pnpm's start-up and one example's tests: 3-6 s on this shared 2-core machine.
    45_000,
  );
});
