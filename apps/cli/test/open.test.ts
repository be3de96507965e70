import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, oapp, tempDir } from './helpers.js';

const dir = tempDir();
const run = (args: string[], input?: Uint8Array) => oapp(args, { cwd: dir, input });
const policy = ['--package-id', 'big-app', '--packager', 'packager.pub', '--key', 'deployment.key'];

beforeAll(async () => {
  await run(['keygen', '--purpose', 'authenticated', '-o', 'packager.key']);
  await run(['keygen', '--purpose', 'authenticated', '-o', 'deployment.key']);
  // A workflow of ~300 KB: five payload chunks of 64 KiB.
  const script = `context.setBody('${'x'.repeat(300_000)}')`;
  const wf = { workflows: [{ name: 'big', steps: [{ stepId: 's', resultsProcessor: { script } }] }] };
  writeFileSync(join(dir, 'big.json'), JSON.stringify(wf));
  const r = await run([
    'package',
    'big.json',
    '-o',
    'big.oapp',
    '--package-id',
    'big-app',
    '--packager-key',
    'packager.key',
    '--recipient',
    'deployment.pub',
  ]);
  expect(r.code).toBe(0);
  const pkg = readFileSync(join(dir, 'big.oapp'));
  // Flip one bit in the last chunk (its tag ends the file).
  pkg[pkg.length - 20]! ^= 0x01;
  writeFileSync(join(dir, 'tampered.oapp'), pkg);
});

describe('open', () => {
  it('opens the multi-chunk package', async () => {
    const r = await run(['open', 'big.oapp', '-o', 'big.out', ...policy]);
    expect(r.code).toBe(0);
    expect(statSync(join(dir, 'big.out')).size).toBeGreaterThan(300_000);
  });

  it('S154: last chunk tampered → exit 1 (CRYPTO_AUTH_FAILED) and no plaintext at the output path', async () => {
    const before = filesIn(dir);
    const r = await run(['open', 'tampered.oapp', '-o', 'plain.json', ...policy]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('oapp: CRYPTO_AUTH_FAILED: a payload chunk does not authenticate\n');
    // Neither the output nor a temporary file holding the first chunks is left.
    expect(filesIn(dir)).toEqual(before);
  });

  it('S154: an existing output file is left as it was', async () => {
    writeFileSync(join(dir, 'keep.json'), 'previous');
    const r = await run(['open', 'tampered.oapp', '-o', 'keep.json', ...policy]);
    expect(r.code).toBe(1);
    expect(readFileSync(join(dir, 'keep.json'), 'utf8')).toBe('previous');
  });

  it('S154: to stdout (-o -) nothing of the content is written', async () => {
    const r = await run(['open', '-', '-o', '-', ...policy], readFileSync(join(dir, 'tampered.oapp')));
    expect(r.code).toBe(1);
    expect(r.stdout.length).toBe(0);
    expect(r.stderr).toMatch(/^oapp: CRYPTO_AUTH_FAILED: /);
  });

  it('a truncated package → exit 1, FORMAT_TRUNCATED, no output', async () => {
    const pkg = readFileSync(join(dir, 'big.oapp'));
    writeFileSync(join(dir, 'short.oapp'), pkg.subarray(0, pkg.length - 100));
    const r = await run(['open', 'short.oapp', '-o', 'short.json', ...policy]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: FORMAT_TRUNCATED: /);
    expect(filesIn(dir)).not.toContain('short.json');
  });

  it('no progress bar when stderr is not a terminal: stderr stays empty on success', async () => {
    const r = await run(['open', 'big.oapp', '-o', 'big2.out', ...policy]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('usage errors exit 2: no -o, --json with -o -, policy flags mixed with --bootstrap', async () => {
    for (const args of [
      ['open', 'big.oapp', ...policy],
      ['open', 'big.oapp', '-o', '-', '--json', ...policy],
      ['open', 'big.oapp', '-o', 'x', '--bootstrap', 'b.json', ...policy],
      ['open', 'big.oapp', '-o', 'x', '--package-id', 'big-app', '--key', 'deployment.key'],
      ['verify', 'big.oapp', '--package-id', 'big-app', '--packager', 'packager.pub', '--threshold', 'x'],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^oapp: CLI_USAGE: [^\n]*\n$/);
    }
  });
});
