import { readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROTOTYPE_NAMES } from '@org/test-utils';
import { looksLikeKey } from '../src/argv-guard.js';
import { filesIn, keyHex, oapp, tempDir } from './helpers.js';

const dir = tempDir();
const run = (args: string[], env?: Record<string, string>) => oapp(args, { cwd: dir, env });
const mode = (f: string) => statSync(join(dir, f)).mode & 0o777;

describe('keygen', () => {
  it('writes a secret key record (0600) and its public record beside it (0644)', async () => {
    const r = await run(['keygen', '--purpose', 'sign', '-o', 'author.key']);
    expect(r.code).toBe(0);
    const secret = JSON.parse(readFileSync(join(dir, 'author.key'), 'utf8'));
    const pub = JSON.parse(readFileSync(join(dir, 'author.pub'), 'utf8'));
    expect(secret).toEqual({
      id: 'author',
      purpose: 'sign',
      type: 'secret',
      keyHex: expect.stringMatching(/^[0-9a-f]{128}$/),
    });
    expect(pub).toEqual({ id: 'author', purpose: 'sign', type: 'public', keyHex: secret.keyHex.slice(64) });
    expect(mode('author.key')).toBe(0o600);
    expect(mode('author.pub')).toBe(0o644);
    expect(r.out).toContain('author.pub');
    expect(r.out).not.toContain(secret.keyHex);
  });

  it('S152: onto an existing file without --force → exit 2, CLI_OUTPUT_EXISTS, both files unchanged', async () => {
    await run(['keygen', '--purpose', 'authenticated', '-o', 'mine.key']);
    const before = [readFileSync(join(dir, 'mine.key')), readFileSync(join(dir, 'mine.pub'))];
    chmodSync(join(dir, 'mine.key'), 0o600);
    const r = await run(['keygen', '--purpose', 'authenticated', '-o', 'mine.key']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oapp: CLI_OUTPUT_EXISTS: mine\.key exists; nothing was written/);
    expect(readFileSync(join(dir, 'mine.key'))).toEqual(before[0]);
    expect(readFileSync(join(dir, 'mine.pub'))).toEqual(before[1]);
    // Only the public file exists: still refused, and the secret file is not created.
    writeFileSync(join(dir, 'half.pub'), 'keep me');
    const half = await run(['keygen', '--purpose', 'sign', '-o', 'half.key']);
    expect(half.code).toBe(2);
    expect(filesIn(dir)).not.toContain('half.key');
    expect(readFileSync(join(dir, 'half.pub'), 'utf8')).toBe('keep me');
    // No temporary file is left behind.
    expect(filesIn(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('S152: --force replaces the key files, still 0600', async () => {
    const old = keyHex(join(dir, 'mine.key'));
    chmodSync(join(dir, 'mine.key'), 0o644);
    const r = await run(['keygen', '--purpose', 'authenticated', '-o', 'mine.key', '--force']);
    expect(r.code).toBe(0);
    expect(keyHex(join(dir, 'mine.key'))).not.toBe(old);
    expect(mode('mine.key')).toBe(0o600);
  });

  it('-o - prints the GET /key-gen JSON; symmetric keys have no public half', async () => {
    const r = await run(['keygen', '--purpose', 'secretbox', '-o', '-']);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      ok: true,
      purpose: 'symmetric',
      encoding: 'hex',
      keyPair: { publicKeyHex: null, secretKeyHex: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    const f = await run(['keygen', '--purpose', 'symmetric', '-o', 'sym.key', '--json']);
    expect(f.json()).toMatchObject({
      ok: true,
      purpose: 'symmetric',
      publicKeyFile: null,
      publicKeyHex: null,
    });
    expect(filesIn(dir)).not.toContain('sym.pub');
  });

  it('an unknown purpose is a usage error (exit 2)', async () => {
    const r = await run(['keygen', '--purpose', 'rsa', '-o', 'x.key']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oapp: CLI_USAGE: .*see oapp keygen --help/);
  });
});

describe('key sources', () => {
  const encrypt = (recipient: string, env?: Record<string, string>) =>
    run(['encrypt-string', '-', '--packager-key', 'env://PK', '--recipient', recipient], { PK: '', ...env });

  it('reads env://NAME holding a key record, the key-gen JSON or bare hex', async () => {
    await Promise.all(['p.key', 'a.key'].map((f) => run(['keygen', '--purpose', 'authenticated', '-o', f])));
    const record = readFileSync(join(dir, 'p.key'), 'utf8');
    const keygenJson = JSON.stringify({
      ok: true,
      purpose: 'box',
      keyPair: { publicKeyHex: null, secretKeyHex: keyHex(join(dir, 'p.key')) },
    });
    const values = [record, keygenJson, keyHex(join(dir, 'p.key')).toUpperCase()];
    for (const r of await Promise.all(values.map((value) => encrypt('a.pub', { PK: value })))) {
      expect(r.stderr).toBe('');
      expect(r.out).toMatch(/^-2\/[A-Za-z0-9+/=]+\n$/);
    }
  });

  // Regression: the purpose alias lookup read inherited properties (purpose "toString" became a function).
  it.each(['rsa', ...PROTOTYPE_NAMES])(
    'key-gen JSON with purpose %s is refused as an unknown purpose',
    async (name) => {
      const hex = keyHex(join(dir, 'p.key'));
      const json = JSON.stringify({ purpose: name, keyPair: { publicKeyHex: null, secretKeyHex: hex } });
      const r = await encrypt('a.pub', { PK: json });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /^oapp: CRYPTO_BAD_KEY_SPEC: --packager-key env:\/\/PK: key "PK": unknown purpose\n$/,
      );
    },
  );

  it.each(PROTOTYPE_NAMES)('keygen --purpose %s is a usage error', async (name) => {
    const r = await run(['keygen', '--purpose', name, '-o', '-']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/CLI_USAGE/);
  });

  it('a secret key file serves where its public half is wanted', async () => {
    const r = await encrypt('a.key', { PK: readFileSync(join(dir, 'p.key'), 'utf8') });
    expect(r.code).toBe(0);
  });

  it('an unset variable, a missing file and a wrong purpose are usage errors (exit 2) naming the option', async () => {
    const source = (key: string) => run(['encrypt-string', '--packager-key', key, '--recipient', 'a.pub']);
    const [unset, missing, wrong] = await Promise.all([
      source('env://NOPE'),
      source('nofile.key'),
      source('author.key'),
    ]);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/^oapp: CLI_KEY_SOURCE: --packager-key env:\/\/NOPE: NOPE is not set\n$/);
    expect(missing.stderr).toMatch(/^oapp: CLI_KEY_SOURCE: --packager-key nofile\.key: no such file\n$/);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^oapp: CRYPTO_WRONG_KEY_PURPOSE: --packager-key author\.key: key "author"/);
  });

  it('warns (once, on stderr) when a secret key file can be read by others', async () => {
    chmodSync(join(dir, 'p.key'), 0o644);
    const r = await run(['encrypt-string', '--packager-key', 'p.key', '--recipient', 'a.pub']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('oapp: warning: p.key can be read by other users (mode 644); chmod 600 it\n');
    chmodSync(join(dir, 'p.key'), 0o600);
  });
});

describe('S153: key material on the command line', () => {
  const hex64 = 'ab'.repeat(32);
  const hex128 = 'CD'.repeat(64);

  it('S153: a secret key as an option value → exit 2, CLI_KEY_ON_COMMAND_LINE pointing to the file and env forms', async () => {
    const r = await run(['encrypt-string', '--packager-key', hex64, '--recipient', 'a.pub']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'oapp: CLI_KEY_ON_COMMAND_LINE: the value of --packager-key looks like key material, and the command line is ' +
        'visible to other users: put the key in a file (--packager-key FILE, mode 0600) or in an environment variable ' +
        '(--packager-key env://NAME)\n',
    );
    expect(r.stderr).not.toContain(hex64);
    expect(r.out).toBe('');
  });

  it('S153: --opt=HEX, a 128-hex sign key, a <pub>/<secret> tuple and an operand are refused too, before anything runs', async () => {
    const before = filesIn(dir);
    const cases = [
      ['package', 'w.json', '-o', 'x.oapp', `--signer=${hex128}`],
      ['decrypt-bootstrap', '--key-tuple', `${hex64}/${hex64}`],
      ['inspect', hex64],
      ['keygen', '--purpose', 'sign', '-o', 'z.key', '--id', hex128],
    ];
    for (const r of await Promise.all(cases.map((args) => run(args)))) {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^oapp: CLI_KEY_ON_COMMAND_LINE: /);
    }
    expect(filesIn(dir)).toEqual(before);
  });

  it('S153: with --json the refusal is also a JSON document', async () => {
    const r = await run(['verify', 'x.oapp', '--packager', hex64, '--json']);
    expect(r.json()).toEqual({
      ok: false,
      errors: [{ code: 'CLI_KEY_ON_COMMAND_LINE', message: expect.any(String) }],
    });
  });

  it('looksLikeKey: exact 64/128 hex and tuples, not paths or hashes inside names', () => {
    expect(looksLikeKey(hex64)).toBe(true);
    expect(looksLikeKey(hex128)).toBe(true);
    expect(looksLikeKey(`${hex64}/${hex64}, ${hex64}/${hex64}`)).toBe(true);
    expect(looksLikeKey(`store/${hex64}.oapp`)).toBe(false);
    expect(looksLikeKey(hex64.slice(2))).toBe(false);
    expect(looksLikeKey('hello-app')).toBe(false);
  });
});
