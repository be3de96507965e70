import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, MAIN, tempDir } from './helpers.js';

// Issue 27: a closed output pipe, outputs checked before anything is written, a public key given as a secret one.

const dir = tempDir();
const CONTENT_BYTES = 4 * 1024 * 1024; // far more than a pipe holds (64 KiB), so the writer is still writing
const record = (id: string, type: 'public' | 'secret', hex: string) =>
  `${JSON.stringify({ id, purpose: 'authenticated', type, keyHex: hex })}\n`;
const seal = ['--package-id', 'big', '--packager-key', 'packager.key', '--recipient', 'deployment.pub'];
const policy = ['--package-id', 'big', '--packager', 'packager.pub', '--key', 'deployment.key'];

beforeAll(() => {
  const packager = generateKeyPair('authenticated');
  const deployment = generateKeyPair('authenticated');
  writeFileSync(join(dir, 'packager.key'), record('packager', 'secret', keyToHex(packager.secretKey)), {
    mode: 0o600,
  });
  writeFileSync(join(dir, 'packager.pub'), record('packager', 'public', keyToHex(packager.publicKey!)));
  writeFileSync(join(dir, 'deployment.key'), record('deployment', 'secret', keyToHex(deployment.secretKey)), {
    mode: 0o600,
  });
  writeFileSync(join(dir, 'deployment.pub'), record('deployment', 'public', keyToHex(deployment.publicKey!)));
  const content = new Uint8Array(CONTENT_BYTES).fill(0x61);
  writeFileSync(join(dir, 'big.bin'), content);
  writeFileSync(
    join(dir, 'big.oapp'),
    createPackage({
      packageId: 'big',
      content,
      packagerSecretKey: packager.secretKey,
      recipients: [deployment.publicKey!],
    }),
  );
  // A workflow whose compiled form is about 512 KiB of text (compiling more only takes longer).
  const script = `// ${'x'.repeat(512 * 1024)}\ncontext.setBody('hi')`;
  writeFileSync(
    join(dir, 'big-workflow.json'),
    JSON.stringify({ workflows: [{ name: 'w', steps: [{ stepId: 's', resultsProcessor: { script } }] }] }),
  );
});

/**
 * Runs `oapp …args` with stdout a real pipe whose reader takes the first chunk and then closes its end, as
 * `oapp … | head -c 10` does. Resolves when the child has exited.
 */
function readOneChunkThenClose(args: readonly string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; signal: string | null; stderr: string; got: number }>(
    (resolve, reject) => {
      const proc = spawn(process.execPath, [MAIN, ...args], {
        cwd: dir,
        env: { PATH: process.env['PATH'] ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let got = 0;
      let stderr = '';
      proc.stdout.once('data', (d: Buffer) => {
        got = d.length;
        proc.stdout.destroy();
      });
      proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      proc.on('error', reject);
      proc.on('close', (code, signal) => resolve({ code, signal, stderr, got }));
    },
  );
}

describe('fix-27: the reader of stdout closes the pipe early', () => {
  it('package --raw -o - | head -c 10: exit 141, nothing on stderr (not CLI_INTERNAL)', async () => {
    const r = await readOneChunkThenClose(['package', '--raw', 'big.bin', '-o', '-', ...seal]);
    expect(r.got).toBeGreaterThan(0);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(141);
  });

  it('open -o - | head: exit 141, nothing on stderr, the private staging file removed', async () => {
    const tmp = join(dir, 'tmp-open');
    mkdirSync(tmp);
    const r = await readOneChunkThenClose(['open', 'big.oapp', '-o', '-', ...policy], { TMPDIR: tmp });
    expect(r.got).toBeGreaterThan(0);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(141);
    expect(filesIn(tmp)).toEqual([]);
  });

  it('compile to stdout | head: exit 141, nothing on stderr', async () => {
    const r = await readOneChunkThenClose(['compile', 'big-workflow.json']);
    expect(r.got).toBeGreaterThan(0);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(141);
  });
});
