import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeAjvProbe } from '@org/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { keygenSealKeys, oapp, openOptions, sealOptions, tempDir } from './helpers.js';

// `oapp package` and `oapp open` compile no JSON schema at run time: the validators they use are generated at build
// time (docs/adr/0148), and ajv is loaded only by a run-time compile. A module given to node's `--import` writes,
// when the process exits, every ajv module in the CommonJS module cache (where node also keeps the CommonJS modules
// that ES modules import).

const HERE = dirname(fileURLToPath(import.meta.url));
const dir = tempDir();
const probeEnv = writeAjvProbe(dir);
let probes = 0;
/** Runs `oapp args` in `dir` with the probe; its exit status and the ajv modules it loaded. */
async function probed(args: string[]): Promise<{ code: number | null; stderr: string; ajv: string[] }> {
  const out = join(dir, `probe-${++probes}.json`);
  const r = await oapp(args, { cwd: dir, env: probeEnv(out) });
  return { code: r.code, stderr: r.stderr, ajv: JSON.parse(readFileSync(out, 'utf8')) as string[] };
}

const seal = sealOptions('raw-app', 'raw release');
const policy = openOptions('raw-app');

beforeAll(async () => {
  await keygenSealKeys(dir);
  writeFileSync(join(dir, 'content.bin'), 'some content\n');
  writeFileSync(
    join(dir, 'hello.workflow.json'),
    JSON.stringify({
      workflows: [
        {
          name: 'hello',
          steps: [{ stepId: 'hello', resultsProcessor: { script: "context.setBody('hi');" } }],
        },
      ],
    }),
  );
}, 60_000);

describe('package and open without ajv', () => {
  it('the probe sees ajv when a process loads it', async () => {
    const ajv = createRequire(
      join(HERE, '..', '..', '..', 'packages', 'workflow-compiler', 'package.json'),
    ).resolve('ajv');
    const out = join(dir, 'control.json');
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(ajv)})`],
      {
        env: { PATH: process.env['PATH'] ?? '', ...probeEnv(out) },
        timeout: 20_000,
      },
    );
    expect(r.status).toBe(0);
    const loaded = JSON.parse(readFileSync(out, 'utf8')) as string[];
    expect(loaded.some((k) => /[\\/]ajv[\\/]dist[\\/]ajv\.js$/.test(k))).toBe(true);
  }, 30_000);

  it('package --raw and open load no ajv', async () => {
    const p = await probed(['package', '--raw', 'content.bin', '-o', 'raw.oapp', ...seal]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.ajv).toEqual([]);
    const o = await probed(['open', 'raw.oapp', '-o', 'raw.out', ...policy]);
    expect(o.code, o.stderr).toBe(0);
    expect(readFileSync(join(dir, 'raw.out'), 'utf8')).toBe('some content\n');
    expect(o.ajv).toEqual([]);
  }, 60_000);

  it('package of a workflow (validated) loads no ajv', async () => {
    const p = await probed(['package', 'hello.workflow.json', '-o', 'wf.oapp', ...seal]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.ajv).toEqual([]);
  }, 60_000);
});
