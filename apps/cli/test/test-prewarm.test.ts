import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeWorkersProbe } from '@org/test-utils';
import { describe, expect, it } from 'vitest';
import { oapp, tempDir } from './helpers.js';

// `oapp test` starts the first sandbox worker as the command starts, before it loads the test runner (ADR 0149).
// A module given to node's `--import` reads the engine's count of started workers (the engine the command line
// imports: the same module) when the main thread exits, and writes it to a file.

const HERE = dirname(fileURLToPath(import.meta.url));
const dir = tempDir();
const probeEnv = writeWorkersProbe(dir, join(HERE, '..'));
mkdirSync(join(dir, 'tests'));
mkdirSync(join(dir, 'resources'));
writeFileSync(
  join(dir, 'testrunner.config.json'),
  JSON.stringify({ resourceDirs: ['resources'], testDirs: ['tests'] }),
);

let probes = 0;
/** Runs `oapp args` in `dir` with the probe: its exit status and the sandbox workers started at its exit. */
async function probed(args: string[]): Promise<{ code: number | null; workers: number }> {
  const out = join(dir, `probe-${++probes}.txt`);
  const r = await oapp(args, { cwd: dir, env: probeEnv(out) });
  return { code: r.code, workers: Number(readFileSync(out, 'utf8')) };
}

describe('oapp test starts the sandbox as it starts', () => {
  it(
    'one worker started before any test ran (here there is none), and the command ends',
    { timeout: 60_000 },
    async () => {
      expect(await probed(['test'])).toEqual({ code: 0, workers: 1 });
    },
  );

  it('none when the config is missing or for --help', { timeout: 60_000 }, async () => {
    expect(await probed(['test', 'missing.json'])).toEqual({ code: 2, workers: 0 });
    expect(await probed(['test', '--help'])).toEqual({ code: 0, workers: 0 });
  });
});
