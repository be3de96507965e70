import { execFileSync, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROGRESS_MIN_BYTES } from '../src/progress.js';
import { MAIN, oapp, tempDir } from './helpers.js';

// util-linux `script` runs a command on a pseudo-terminal: the only way to give the child a TTY stderr.
const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const dir = tempDir();
const policy = ['--package-id', 'large', '--packager', 'packager.pub', '--key', 'deployment.key'];

function onTerminal(args: string[]): Promise<string> {
  const command = [process.execPath, MAIN, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve, reject) => {
    const p = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: dir });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
  });
}

beforeAll(() => {
  const packager = generateKeyPair('authenticated');
  const deployment = generateKeyPair('authenticated');
  const record = (id: string, type: 'public' | 'secret', hex: string) =>
    JSON.stringify({ id, purpose: 'authenticated', type, keyHex: hex });
  writeFileSync(join(dir, 'packager.pub'), record('packager', 'public', keyToHex(packager.publicKey!)));
  writeFileSync(join(dir, 'deployment.key'), record('deployment', 'secret', keyToHex(deployment.secretKey)), {
    mode: 0o600,
  });
  const large = (size: number) =>
    createPackage({
      packageId: 'large',
      content: new Uint8Array(size).fill(0x61),
      packagerSecretKey: packager.secretKey,
      recipients: [deployment.publicKey!],
    });
  writeFileSync(join(dir, 'large.oapp'), large(PROGRESS_MIN_BYTES));
  writeFileSync(join(dir, 'small.oapp'), large(1024 * 1024));
  // For `package --raw`: the packager's secret key, the deployment's public key and 64 MiB of content.
  writeFileSync(join(dir, 'packager.key'), record('packager', 'secret', keyToHex(packager.secretKey)), {
    mode: 0o600,
  });
  writeFileSync(join(dir, 'deployment.pub'), record('deployment', 'public', keyToHex(deployment.publicKey!)));
  writeFileSync(join(dir, 'large.bin'), new Uint8Array(PROGRESS_MIN_BYTES).fill(0x62));
}, 120_000);

// Four 64 MiB files: not left in the temporary directory.
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('progress bar', () => {
  it.skipIf(!hasScript)('a 64 MiB package on a terminal shows the bar on stderr', async () => {
    const out = await onTerminal(['open', 'large.oapp', '-o', 'large.out', ...policy]);
    expect(out).toContain('decrypting [');
    expect(out).toContain('100%');
  });

  it.skipIf(!hasScript)('a small package on a terminal shows none', async () => {
    const out = await onTerminal(['open', 'small.oapp', '-o', 'small.out', ...policy]);
    expect(out).not.toContain('decrypting');
  });

  it('the 64 MiB package with stderr in a pipe shows none: stderr stays empty', async () => {
    const r = await oapp(['open', 'large.oapp', '-o', 'large2.out', ...policy], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  const seal = ['--package-id', 'large', '--packager-key', 'packager.key', '--recipient', 'deployment.pub'];

  it.skipIf(!hasScript)('package --raw of 64 MiB on a terminal shows the bar on stderr', async () => {
    const out = await onTerminal(['package', '--raw', 'large.bin', '-o', 'packed.oapp', ...seal]);
    expect(out).toContain('packaging [');
    expect(out).toContain('100%');
  });

  it('package --raw of 64 MiB with stderr in a pipe shows none', async () => {
    const r = await oapp(['package', '--raw', 'large.bin', '-o', 'packed2.oapp', ...seal], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});
