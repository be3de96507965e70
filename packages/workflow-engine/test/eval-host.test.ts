import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withoutRefused } from '../src/sandbox.js';

const DIST = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js')).href;

const code = `
      import { createWorkflowEngine } from ${JSON.stringify(DIST)};
      const host = { callOutbound: () => { throw new Error('no'); }, getRestrictedData: async () => undefined,
        registerSecret() {}, log() {}, metric() {}, now: Date.now };
      const wf = { workflows: [{ name: 'w', steps: [{ stepId: 'a', resultsProcessor: { script: 'context.setBody("ran")' } }] }] };
      const e = await createWorkflowEngine(wf, { host, data: {} });
      const r = await e.runStep('a', { body: undefined, stream: undefined, headers: {}, properties: {} });
      e.dispose();
      console.log(r.body);`;

describe('hosting the engine from node -e', () => {
  // 1.3 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'the sandbox starts when the host process runs with --input-type=module -e (flags are not passed on)',
    { timeout: 10_000 },
    () => {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe('ran');
      // V8 heap sizes of the host process are not passed on either: a worker refuses them.
      const sized = spawnSync(
        process.execPath,
        ['--max-old-space-size=512', '--max-semi-space-size=2', '--input-type=module', '-e', code],
        { encoding: 'utf8' },
      );
      expect(sized.stderr).toBe('');
      expect(sized.stdout.trim()).toBe('ran');
    },
  );

  it('the sandbox starts when the host runs with V8 or per-process flags a worker refuses (they are left out)', () => {
    // node refuses each of these in a worker's execArgv (ERR_WORKER_INVALID_EXEC_ARGV); --trace-warnings it takes.
    const flags = ['--stack-trace-limit=50', '--expose-gc', '--secure-heap=0', '--trace-warnings'];
    const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', code], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ran');
  });
});

describe('withoutRefused', () => {
  it("drops the flags node's message names, and every flag when it names none of them", () => {
    const argv = ['--trace-warnings', '--stack-trace-limit=50', '--expose-gc'];
    expect(
      withoutRefused(
        argv,
        'Initiated Worker with invalid execArgv flags: --stack-trace-limit=50, --expose-gc',
      ),
    ).toEqual(['--trace-warnings']);
    expect(withoutRefused(argv, 'something else')).toEqual([]);
    expect(withoutRefused(argv, 'Initiated Worker with invalid execArgv flags: --other')).toEqual([]);
  });
});
