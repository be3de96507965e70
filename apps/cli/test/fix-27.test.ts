import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProgram } from '../src/cli.js';
import { processContext } from '../src/context.js';
import { filesIn, MAIN, oapp, tempDir } from './helpers.js';

// Issue 27: a closed output pipe, outputs checked before anything is written, a public key given as a secret one.

const dir = tempDir();
const CONTENT_BYTES = 4 * 1024 * 1024; // far more than a pipe holds (64 KiB), so the writer is still writing
const record = (id: string, type: 'public' | 'secret', hex: string) =>
  `${JSON.stringify({ id, purpose: 'authenticated', type, keyHex: hex })}\n`;
const seal = ['--package-id', 'big', '--packager-key', 'packager.key', '--recipient', 'deployment.pub'];
const policy = ['--package-id', 'big', '--packager', 'packager.pub', '--key', 'deployment.key'];
/** Tests that run two child processes one after the other (about 0.4–0.7 s each on this 2-core machine). */
const TWO_CHILDREN_MS = 10_000;

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

describe('fix-27: every output path is checked before anything is written', () => {
  /** A fresh empty directory inside the test directory. */
  const fresh = () => mkdtempSync(join(dir, 'out-'));

  it(
    "keygen, the README's example without keys/: exit 2, CLI_FILE_UNWRITABLE naming the path, nothing written; the retry works",
    async () => {
      const cwd = fresh();
      const args = [
        'keygen',
        '--purpose',
        'authenticated',
        '-o',
        'packager.key',
        '--public-out',
        'keys/packager.pub',
      ];
      const r = await oapp(args, { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        'oapp: CLI_FILE_UNWRITABLE: keys/packager.pub: directory keys does not exist; nothing was written\n',
      );
      expect(filesIn(cwd)).toEqual([]);
      mkdirSync(join(cwd, 'keys'));
      const retry = await oapp(args, { cwd });
      expect(retry.code).toBe(0);
      expect(filesIn(cwd)).toEqual(['keys', 'packager.key']);
      expect(filesIn(join(cwd, 'keys'))).toEqual(['packager.pub']);
    },
    TWO_CHILDREN_MS,
  );

  it(
    'keygen with a --public-out whose parent is a file, or that is a directory: nothing written',
    async () => {
      const cwd = fresh();
      writeFileSync(join(cwd, 'plain'), 'x');
      mkdirSync(join(cwd, 'pubdir'));
      const cases = [
        ['plain/a.pub', 'plain/a.pub: plain is not a directory; nothing was written'],
        ['pubdir', 'pubdir: is a directory; nothing was written'],
      ];
      for (const [pub, message] of cases) {
        const r = await oapp(['keygen', '--purpose', 'sign', '-o', 'a.key', '--public-out', pub!], { cwd });
        expect(r.code, pub).toBe(2);
        expect(r.stderr).toBe(`oapp: CLI_FILE_UNWRITABLE: ${message}\n`);
      }
      expect(filesIn(cwd)).toEqual(['plain', 'pubdir']);
      expect(filesIn(join(cwd, 'pubdir'))).toEqual([]);
    },
    TWO_CHILDREN_MS,
  );

  it('keygen: -o and --public-out spelled differently but the same file → CLI_USAGE, nothing written', async () => {
    const cwd = fresh();
    const r = await oapp(['keygen', '--purpose', 'sign', '-o', 'a.key', '--public-out', './a.key'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('oapp: CLI_USAGE: -o and --public-out name the same file (./a.key)\n');
    expect(filesIn(cwd)).toEqual([]);
  });

  // One case per command that writes a file; the inputs and keys named do not exist, so a command that looked at
  // anything before its output path would fail with another code.
  const missing = ['--packager-key', 'none.key', '--recipient', 'none.pub'];
  const WRITERS: Record<string, string[]> = {
    keygen: ['keygen', '--purpose', 'sign'],
    package: ['package', 'none.json', '--package-id', 'p', ...missing],
    open: ['open', 'none.oapp', '--key', 'none.key', '--package-id', 'p', '--packager', 'none.pub'],
    envelope: [
      'envelope',
      'none.oapp',
      '--key',
      'none.key',
      '--package-id',
      'p',
      '--packager',
      'none.pub',
      ...missing,
    ],
    'encrypt-string': ['encrypt-string', 'none.txt', ...missing],
    'encrypt-bootstrap': ['encrypt-bootstrap', 'none.json', ...missing],
    'decrypt-bootstrap': ['decrypt-bootstrap', 'none.enc', '--key-tuple', 'none.key'],
    'sign-bootstrap': ['sign-bootstrap', 'none.json', '--sign-key', 'none.key'],
    compile: ['compile', 'none.json'],
    build: ['build', 'none.json'],
    test: ['test', 'none.config.json'],
  };

  it('the table above covers every command with an -o option', async () => {
    const program = await createProgram(processContext({}), () => undefined);
    const writers = program.commands.filter((c) => c.options.some((o) => o.long === '--output'));
    expect(writers.map((c) => c.name()).sort()).toEqual(Object.keys(WRITERS).sort());
  });

  it.each(Object.entries(WRITERS))(
    '%s -o into a missing directory: exit 2, CLI_FILE_UNWRITABLE first',
    async (_, args) => {
      const cwd = fresh();
      const r = await oapp([...args, '-o', 'missing/out'], { cwd });
      expect(r.stderr).toBe(
        'oapp: CLI_FILE_UNWRITABLE: missing/out: directory missing does not exist; nothing was written\n',
      );
      expect(r.code).toBe(2);
      expect(filesIn(cwd)).toEqual([]);
    },
  );

  it('an output that is not a regular file (a FIFO; /dev/null alike) is refused, not replaced', async () => {
    const cwd = fresh();
    execFileSync('mkfifo', [join(cwd, 'fifo')]);
    const r = await oapp(['compile', 'none.json', '-o', 'fifo'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'oapp: CLI_FILE_UNWRITABLE: fifo: not a regular file (use - for standard output); nothing was written\n',
    );
    expect(statSync(join(cwd, 'fifo')).isFIFO()).toBe(true);
  });
});

describe('fix-27: a public key file given where a secret key is needed', () => {
  const refusal =
    'oapp: CRYPTO_WRONG_KEY_TYPE: --packager-key packager.pub: this file holds a public key, and a secret key is ' +
    'needed here (oapp keygen writes the secret half to the .key file)\n';

  it('says the file holds a public key, with no chmod warning (a public key file is meant to be readable)', async () => {
    chmodSync(join(dir, 'packager.pub'), 0o644);
    const args = [
      'encrypt-string',
      '-o',
      'never.txt',
      '--packager-key',
      'packager.pub',
      '--recipient',
      'deployment.pub',
    ];
    const r = await oapp(args, { cwd: dir, input: 'secret' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(refusal);
    expect(filesIn(dir)).not.toContain('never.txt');
  });

  it('the same for a variable holding a public key record', async () => {
    const env = { PK: readFileSync(join(dir, 'packager.pub'), 'utf8') };
    const r = await oapp(['encrypt-string', '--packager-key', 'env://PK', '--recipient', 'deployment.pub'], {
      cwd: dir,
      env,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'oapp: CRYPTO_WRONG_KEY_TYPE: --packager-key env://PK: this variable holds a public key, and a secret key is ' +
        'needed here\n',
    );
  });

  it('still warns about a readable file that holds a secret key, whatever option it was given to', async () => {
    // A secret key record serves where its public half is wanted; it is still a secret on disk.
    copyFileSync(join(dir, 'deployment.key'), join(dir, 'shared.key'));
    chmodSync(join(dir, 'shared.key'), 0o640);
    const r = await oapp(['encrypt-string', '--packager-key', 'packager.key', '--recipient', 'shared.key'], {
      cwd: dir,
      input: 'secret',
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('oapp: warning: shared.key can be read by other users (mode 640); chmod 600 it\n');
  });
});
