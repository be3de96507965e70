import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'pack-install-check.sh');

/** npm installs the third-party dependencies from the registry: minutes on a cold cache and a slow link. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

function runScript(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [SCRIPT, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// The tarballs `pnpm pack` makes, installed with plain npm in a project outside the repository, as a user
// installs the command line (scripts/pack-install-check.sh). --no-build: the tests run after `pnpm build`, and
// rebuilding here would remove dist/ files under the tests running beside this one. --all: every publishable
// library too, so the workflow engine's sandbox files, wasm and LMDB addon are checked from node_modules.
describe('scripts/pack-install-check.sh', () => {
  beforeAll(() => {
    const main = join(ROOT, 'apps', 'cli', 'dist', 'main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm build before the tests`);
  });

  it(
    'installs the packed @org packages with npm outside the repository and runs the installed oapp',
    async () => {
      const { code, stdout, stderr } = await runScript(['--no-build', '--all']);
      const lines = stdout.trimEnd().split('\n');
      expect({ code, last: lines.at(-1), stderr: code === 0 ? '' : stderr }).toEqual({
        code: 0,
        last: 'pack-install: ok',
        stderr: '',
      });
      expect(stdout).toMatch(/^pack-install: oapp \d+\.\d+\.\d+/m);
      expect(stdout).toContain('@org/workflow-engine ran a sandboxed step');
    },
    INSTALL_TIMEOUT_MS,
  );
});
