import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, keygenSealKeys, oapp, openOptions, sealOptions, tempDir } from './helpers.js';

const dir = tempDir();
const run = (args: string[], input?: Uint8Array) => oapp(args, { cwd: dir, input });
const seal = sealOptions('raw-app', 'raw release');
const policy = openOptions('raw-app');
// 3 MiB + 5 bytes: 49 payload chunks of 64 KiB, the last one short.
const content = randomBytes(3 * 1024 * 1024 + 5);

beforeAll(async () => {
  await keygenSealKeys(dir);
  writeFileSync(join(dir, 'content.bin'), content);
});

describe('package --raw and open: streamed multi-chunk content', () => {
  it('from a file to a file (one-pass writer) and back', async () => {
    const p = await run(['package', '--raw', 'content.bin', '-o', 'file.oapp', '--json', ...seal]);
    expect(p.code).toBe(0);
    const summary = p.json();
    expect(summary).toMatchObject({ ok: true, output: 'file.oapp', packageId: 'raw-app', signatures: 1 });
    expect(summary.workflowHash).toBeUndefined();
    expect(summary.bytes).toBe(statSync(join(dir, 'file.oapp')).size);
    const o = await run(['open', 'file.oapp', '-o', 'file.out', ...policy]);
    expect(o.code).toBe(0);
    expect(readFileSync(join(dir, 'file.out')).equals(content)).toBe(true);
  });

  it('from stdin (spooled) to a file and back through stdin/stdout', async () => {
    const p = await run(['package', '--raw', '-', '-o', 'stdin.oapp', ...seal], content);
    expect(p.code).toBe(0);
    const o = await run(['open', '-', '-o', '-', ...policy], readFileSync(join(dir, 'stdin.oapp')));
    expect(o.code).toBe(0);
    expect(o.stdout.equals(content)).toBe(true);
  });

  it('from a file to stdout (two-pass stream) and back', async () => {
    const p = await run(['package', '--raw', 'content.bin', '-o', '-', ...seal]);
    expect(p.code).toBe(0);
    writeFileSync(join(dir, 'piped.oapp'), p.stdout);
    const o = await run(['open', 'piped.oapp', '-o', 'piped.out', ...policy]);
    expect(o.code).toBe(0);
    expect(readFileSync(join(dir, 'piped.out')).equals(content)).toBe(true);
  });

  it('from stdin to stdout (spooled, two-pass stream) and back', async () => {
    const p = await run(['package', '--raw', '-', '-o', '-', ...seal], content);
    expect(p.code).toBe(0);
    writeFileSync(join(dir, 'pipe2.oapp'), p.stdout);
    const o = await run(['open', 'pipe2.oapp', '-o', '-', ...policy]);
    expect(o.code).toBe(0);
    expect(o.stdout.equals(content)).toBe(true);
  });

  it('S154: a package whose payload was cut short leaves nothing at the output path', async () => {
    const pkg = readFileSync(join(dir, 'file.oapp'));
    writeFileSync(join(dir, 'short.oapp'), pkg.subarray(0, pkg.length - 1000));
    const before = filesIn(dir);
    const r = await run(['open', 'short.oapp', '-o', 'short.out', ...policy]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: FORMAT_TRUNCATED: /);
    expect(filesIn(dir)).toEqual(before);
  });

  it('--raw refuses --resource-dir; a missing input writes nothing', async () => {
    const before = filesIn(dir);
    const a = await run(['package', '--raw', 'content.bin', '-o', 'x.oapp', '--resource-dir', '.', ...seal]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/^oapp: CLI_USAGE: /);
    const b = await run(['package', '--raw', 'missing.bin', '-o', 'x.oapp', ...seal]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/^oapp: CLI_FILE_UNREADABLE: /);
    expect(filesIn(dir)).toEqual(before);
  });
});
