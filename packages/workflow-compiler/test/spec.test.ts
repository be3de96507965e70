import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as api from '../src/index.js';
import { WORKFLOW_ERROR_CODES, canonicalize, compileWorkflow, hashWorkflow } from '../src/index.js';
import { scratch } from './fixtures.js';

const spec = readFileSync(new URL('../SPEC.md', import.meta.url), 'utf8');

interface Block {
  example: string;
  kind: string;
  arg: string | undefined;
  text: string;
}

/** Fenced blocks whose info string is `<lang> example-<n>.<kind> [arg]`; the text keeps its final newline. */
const blocks: Block[] = [
  ...spec.matchAll(/^```\w+ (example-\d+)\.([a-z0-9-]+)(?: (\S+))?\n([\s\S]*?)^```$/gm),
].map((m) => ({
  example: m[1]!,
  kind: m[2]!,
  arg: m[3],
  text: m[4]!,
}));
const examples = [...new Set(blocks.map((b) => b.example))];

describe('SPEC.md worked examples', () => {
  const s = scratch();
  afterAll(s.cleanup);

  it('has the three examples', () => {
    expect(examples).toEqual(['example-1', 'example-2', 'example-3']);
  });

  it.each(examples)('%s: compiled JCS text, bytes and hash match the spec', async (example) => {
    const of = (kind: string) => blocks.filter((b) => b.example === example && b.kind === kind);
    const dir = join(s.root, example);
    const resources = of('resource').map((b) => [b.arg!.replace(/^\//, ''), b.text] as const);
    const files = scratch(Object.fromEntries(resources.map(([p, t]) => [`${example}/${p}`, t])));
    try {
      const resourceDirs = [join(files.root, example), dir];
      const { workflow } = await compileWorkflow(of('source')[0]!.text, { resourceDirs });
      const canonical = canonicalize(workflow);
      for (const b of of('canonical')) expect(canonical).toBe(b.text.trimEnd());
      for (const b of of('utf8-hex'))
        expect(Buffer.from(canonical, 'utf8').toString('hex')).toBe(b.text.replace(/\s/g, ''));
      const sha = of('sha256');
      expect(sha).toHaveLength(1);
      expect(hashWorkflow(workflow)).toBe(sha[0]!.text.trim());
      expect(createHash('sha256').update(Buffer.from(canonical, 'utf8')).digest('hex')).toBe(
        sha[0]!.text.trim(),
      );
    } finally {
      files.cleanup();
    }
  });

  it('names only codes that exist, and every code at least once', () => {
    const named = new Set(spec.match(/WORKFLOW_[A-Z0-9_]+[A-Z0-9]/g));
    for (const code of named) {
      if (code.endsWith('_JSON') || code in api) continue;
      expect(WORKFLOW_ERROR_CODES).toContain(code);
    }
    for (const code of WORKFLOW_ERROR_CODES) expect(named).toContain(code);
  });
});
