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

// The tarballs `pnpm pack` makes of every public package, installed with plain npm in a project outside the
// repository, as a user installs them (scripts/pack-install-check.sh): manifests, README examples, ESM and CommonJS
// entries, types under nodenext and bundler resolution, the workflow engine's sandbox and LMDB, the installed
// `oapp`; and the libraries again on Node 22 and 24 (the supported majors besides this machine's Node 20).
// --no-build: the tests run after `pnpm build`, and rebuilding here would remove dist/ files under the tests
// running beside this one.
describe('scripts/pack-install-check.sh', () => {
  beforeAll(() => {
    const main = join(ROOT, 'apps', 'cli', 'dist', 'main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm build before the tests`);
  });

  it(
    'installs every packed public @org package with npm outside the repository and uses it on Node 20, 22 and 24',
    async () => {
      const { code, stdout, stderr } = await runScript(['--no-build', '--node', '22', '--node', '24']);
      const lines = stdout.trimEnd().split('\n');
      expect({ code, last: lines.at(-1), stderr: code === 0 ? '' : stderr }).toEqual({
        code: 0,
        last: 'pack-install: ok',
        stderr: '',
      });
      expect(stdout).toMatch(/^pack-install: oapp \d+\.\d+\.\d+/m);
      expect(stdout).toContain('@org/workflow-engine ran a sandboxed step');
      // Issue 27: the release set is the public packages only; the private ones are bundled, never installed.
      expect(stdout).toMatch(
        /^pack-install: no private package packed, depended on or installed \(.*@org\/http-problem.*@org\/strict-json.*\)$/m,
      );
      expect(stdout).toMatch(
        /^pack-install: README examples ran; \d+ ESM entries loaded, every main export documented$/m,
      );
      expect(stdout).toMatch(
        /^pack-install: \d+ CommonJS entries required; round trip through the CommonJS builds ok$/m,
      );
      expect(stdout).toMatch(/^pack-install: node v22\.\d+\.\d+: README examples, ESM and CommonJS checks/m);
      expect(stdout).toMatch(/^pack-install: node v24\.\d+\.\d+: README examples, ESM and CommonJS checks/m);
    },
    INSTALL_TIMEOUT_MS,
  );
});
