import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseKey } from '@org/envelope-crypto';
import { encryptBootstrap, inspectPackage, verifyBootstrapSignature } from '@org/oapp-format';
import sodium from 'libsodium-wrappers';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyHex, oapp, tempDir, writeKeyPair } from './helpers.js';

// Issue 29 §2 from the command line: `sign-bootstrap` writes the detached signature of a plain bootstrap,
// `encrypt-bootstrap --sign-key` signs an encrypted one, and `verify-bootstrap` (and `decrypt-bootstrap
// --admin-key`) make the check an agent given administrator keys makes at start-up (S173).
// Key files are made in-process (keys.test.ts runs `oapp keygen`); independent runs of a test go side by side.

const dir = tempDir();
const run = (args: string[], env?: Record<string, string>, input?: string) =>
  oapp(args, { cwd: dir, env, input });
const at = (f: string) => join(dir, f);
const hex = (f: string) => keyHex(at(f));
const BOOTSTRAP = [{ deploymentId: 'd1', remoteConfiguration: 'x.oapp' }];
const FORGED = [{ deploymentId: 'd1', remoteConfiguration: '/tmp/attacker.oapp' }];
const seal = ['--packager-key', 'packager.key', '--recipient', 'agent.pub'];
const opener = ['--key', 'agent.key', '--sender', 'packager.pub'];

beforeAll(async () => {
  await sodium.ready;
  for (const k of ['packager', 'agent']) writeKeyPair(dir, k, 'authenticated');
  for (const k of ['admin', 'admin2', 'other']) writeKeyPair(dir, k, 'sign');
  writeFileSync(at('bootstrap.json'), JSON.stringify(BOOTSTRAP));
  const signed = await run([
    'sign-bootstrap',
    'bootstrap.json',
    '--sign-key',
    'admin.key',
    '--sequence',
    '3',
  ]);
  expect(signed.stderr).toBe('');
  expect(signed.code).toBe(0);
});

/** A copy of bootstrap.json (and, unless `sig` is false, its signature) under another name. */
function copy(name: string, bytes: string | Buffer = readFileSync(at('bootstrap.json')), sig = true): void {
  writeFileSync(at(name), bytes);
  if (sig) writeFileSync(at(`${name}.sig`), readFileSync(at('bootstrap.json.sig')));
}

describe('sign-bootstrap → verify-bootstrap (plain bootstrap and its .sig)', () => {
  it('writes <bootstrap>.sig that oapp-format verifies; verify-bootstrap accepts it, exit 0', async () => {
    const sig = readFileSync(at('bootstrap.json.sig'), 'utf8');
    expect(JSON.parse(sig)).toMatchObject({ format: 'oapp-bootstrap-signature/v1' });
    const info = verifyBootstrapSignature(readFileSync(at('bootstrap.json')), sig, {
      administrators: {
        keys: [
          {
            id: 'admin',
            publicKey: parseKey({ id: 'a', purpose: 'sign', type: 'public', keyHex: hex('admin.pub') }).bytes,
          },
        ],
        threshold: 1,
      },
    });
    expect(info.sequence).toBe(3);
    const r = await run(['verify-bootstrap', 'bootstrap.json', '--admin-key', 'admin.pub']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^verified: bootstrap "bootstrap.json"$/m);
    expect(r.out).toMatch(/^ {2}signed by {4}"admin" \([0-9a-f]{16}\) \(1 of 1 administrators required\)$/m);
    expect(r.out).toMatch(/^ {2}sequence {5}3$/m);
    expect(r.out).toMatch(/^ {2}expires {6}never$/m);
  });

  it('--json: the signature, sequence, times and the administrators found, raw', async () => {
    const r = await run(['verify-bootstrap', 'bootstrap.json', '--admin-key', 'admin.pub', '--json']);
    expect(r.json()).toMatchObject({
      ok: true,
      bootstrap: 'bootstrap.json',
      encrypted: false,
      signature: 'bootstrap.json.sig',
      sequence: 3,
      expiresAt: null,
      signers: [{ id: 'admin', fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) }],
    });
  });

  it('sign-bootstrap --json reports what the file says; -o names it; --expires-in sets the expiry', async () => {
    const r = await run([
      'sign-bootstrap',
      'bootstrap.json',
      '-o',
      'b.sig',
      '--json',
      '--sign-key',
      'admin.key',
      '--sign-key',
      'admin2.key',
      '--sign-text',
      'ops',
      '--expires-in',
      '2d',
      '--sequence',
      '9',
    ]);
    expect(r.code).toBe(0);
    const j = r.json();
    expect(j).toMatchObject({ ok: true, output: 'b.sig', sequence: 9, signatures: 2 });
    expect(Date.parse(j.expiresAt) - Date.parse(j.createdAt)).toBe(2 * 86_400_000);
    expect(j.bytes).toBe(readFileSync(at('b.sig')).length);
    const both = ['--admin-key', 'admin.pub', '--admin-key', 'admin2.pub', '--signature', 'b.sig'];
    expect((await run(['verify-bootstrap', 'bootstrap.json', ...both, '--threshold', '2'])).code).toBe(0);
    // The signature's expiry, with the agent's 300 s of clock skew.
    const past = new Date(Date.parse(j.expiresAt) + 301_000).toISOString();
    const expired = await run(['verify-bootstrap', 'bootstrap.json', ...both, '--now', past]);
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/^oapp: POLICY_EXPIRED: /);
  });

  it('S173: a bootstrap without its .sig → exit 1, CLI_BOOTSTRAP_UNSIGNED', async () => {
    copy('unsigned.json', undefined, false);
    const r = await run(['verify-bootstrap', 'unsigned.json', '--admin-key', 'admin.pub', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^oapp: CLI_BOOTSTRAP_UNSIGNED: unsigned.json has no signature: unsigned.json.sig does not exist/,
    );
    expect(r.json()).toMatchObject({ ok: false, errors: [{ code: 'CLI_BOOTSTRAP_UNSIGNED' }] });
  });

  it('S173: signed by another key than the administrators → exit 1, POLICY_SIGNER_THRESHOLD_NOT_MET', async () => {
    copy('other.json', undefined, false);
    expect((await run(['sign-bootstrap', 'other.json', '--sign-key', 'other.key'])).code).toBe(0);
    const r = await run(['verify-bootstrap', 'other.json', '--admin-key', 'admin.pub']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: POLICY_SIGNER_THRESHOLD_NOT_MET: /);
  });

  it('S173: any byte of the bootstrap changed after signing → exit 1, CRYPTO_CONTENT_MISMATCH', async () => {
    const original = readFileSync(at('bootstrap.json'));
    const bytes = [0, original.length >> 1, original.length - 1];
    for (const i of bytes) {
      const changed = Buffer.from(original);
      changed[i] = changed[i]! ^ 0x01;
      copy(`changed-${i}.json`, changed);
    }
    // A trailing newline added is a changed byte too.
    copy('newline.json', Buffer.concat([original, Buffer.from('\n')]));
    const [newline, ...runs] = await Promise.all(
      ['newline.json', ...bytes.map((i) => `changed-${i}.json`)].map((f) =>
        run(['verify-bootstrap', f, '--admin-key', 'admin.pub']),
      ),
    );
    for (const [n, r] of runs.entries()) {
      expect(r.code, `byte ${bytes[n]}`).toBe(1);
      expect(r.stderr).toMatch(/^oapp: CRYPTO_CONTENT_MISMATCH: /);
    }
    expect(newline!.code).toBe(1);
  });

  it('S173: a changed signature file → exit 1 (refused, never accepted)', async () => {
    const sig = readFileSync(at('bootstrap.json.sig'), 'utf8');
    const parsed = JSON.parse(sig) as { signatures: string };
    const raw = Buffer.from(parsed.signatures, 'base64');
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 0x01;
    writeFileSync(at('tampered.sig'), JSON.stringify({ ...parsed, signatures: raw.toString('base64') }));
    const r = await run([
      'verify-bootstrap',
      'bootstrap.json',
      '--signature',
      'tampered.sig',
      '--admin-key',
      'admin.pub',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: (POLICY_SIGNATURE_INVALID|FORMAT_[A-Z_]+): /);
    writeFileSync(at('garbage.sig'), 'not json');
    const g = await run([
      'verify-bootstrap',
      'bootstrap.json',
      '--signature',
      'garbage.sig',
      '--admin-key',
      'admin.pub',
    ]);
    expect(g.code).toBe(1);
    expect(g.stderr).toMatch(/^oapp: FORMAT_/);
  });

  /** The code oapp-format (and so the agent, which passes the file's bytes) gives for these signature bytes. */
  function libraryCode(sig: Buffer): string {
    try {
      verifyBootstrapSignature(readFileSync(at('bootstrap.json')), sig, {
        administrators: {
          keys: [
            {
              id: 'admin',
              publicKey: parseKey({ id: 'a', purpose: 'sign', type: 'public', keyHex: hex('admin.pub') })
                .bytes,
            },
          ],
          threshold: 1,
        },
      });
    } catch (err) {
      return (err as { code: string }).code;
    }
    return 'accepted';
  }

  it('a .sig holding a 0xFF byte → the code oapp-format and the agent give (FORMAT_BAD_UTF8), not another', async () => {
    const sig = readFileSync(at('bootstrap.json.sig'));
    const bad = Buffer.concat([Buffer.from('{"'), Buffer.from([0xff]), Buffer.from('":1,'), sig.subarray(1)]);
    expect(bad.includes(0xff)).toBe(true);
    writeFileSync(at('ff.sig'), bad);
    expect(libraryCode(bad)).toBe('FORMAT_BAD_UTF8');
    const r = await run([
      'verify-bootstrap',
      'bootstrap.json',
      '--signature',
      'ff.sig',
      '--admin-key',
      'admin.pub',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: FORMAT_BAD_UTF8: /);
  });

  it('a .sig of 70 000 bytes above 0x7F is judged on its byte size (under the cap), as the agent judges it', async () => {
    // 35 000 × "é" (C3 A9) is valid UTF-8 of 70 000 bytes: under the 131 072-byte cap, so not FORMAT_SECTION_TOO_LARGE.
    const high = Buffer.concat([Buffer.from('{"x":"'), Buffer.from('é'.repeat(35_000)), Buffer.from('"}')]);
    const invalid = Buffer.alloc(70_000, 0xe9);
    for (const [name, bytes] of [
      ['high.sig', high],
      ['invalid.sig', invalid],
    ] as const) {
      writeFileSync(at(name), bytes);
      const code = libraryCode(bytes);
      expect(code).not.toBe('FORMAT_SECTION_TOO_LARGE');
      const r = await run([
        'verify-bootstrap',
        'bootstrap.json',
        '--signature',
        name,
        '--admin-key',
        'admin.pub',
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^oapp: ${code}: `));
    }
    // Above the cap in bytes it is still refused as too large.
    writeFileSync(at('big.sig'), Buffer.alloc(140_000, 0x20));
    const big = await run([
      'verify-bootstrap',
      'bootstrap.json',
      '--signature',
      'big.sig',
      '--admin-key',
      'admin.pub',
    ]);
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/^oapp: FORMAT_SECTION_TOO_LARGE: /);
  });

  it('two administrators with --threshold 2 and one signature → exit 1; --threshold above the keys → exit 2', async () => {
    const two = ['--admin-key', 'admin.pub', '--admin-key', 'admin2.pub'];
    const [short, over] = await Promise.all([
      run(['verify-bootstrap', 'bootstrap.json', ...two, '--threshold', '2']),
      run(['verify-bootstrap', 'bootstrap.json', ...two, '--threshold', '3']),
    ]);
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/^oapp: POLICY_SIGNER_THRESHOLD_NOT_MET: /);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/^oapp: CLI_USAGE: --threshold must be a whole number from 1 to 2/);
  });

  it('reads the administrators as the agent does: AGENT_BOOTSTRAP_ADMIN_KEYS(_FILE), AGENT_BOOTSTRAP_ADMIN_THRESHOLD', async () => {
    const keys = `${hex('admin2.pub')},${hex('admin.pub')}`;
    writeFileSync(
      at('admins.txt'),
      `# the administrators\n${hex('admin.pub')}\n\n${hex('admin2.pub')}  # second\n`,
    );
    const file = { AGENT_BOOTSTRAP_ADMIN_KEYS_FILE: 'admins.txt' };
    // The list file through --admin-key too; both variables set is the agent's configuration error.
    const [fromEnv, fromFile, k2, fromFlag, both, none] = await Promise.all([
      run(['verify-bootstrap', 'bootstrap.json'], { AGENT_BOOTSTRAP_ADMIN_KEYS: keys }),
      run(['verify-bootstrap', 'bootstrap.json'], file),
      run(['verify-bootstrap', 'bootstrap.json'], { ...file, AGENT_BOOTSTRAP_ADMIN_THRESHOLD: '2' }),
      run(['verify-bootstrap', 'bootstrap.json', '--admin-key', 'admins.txt']),
      run(['verify-bootstrap', 'bootstrap.json'], { ...file, AGENT_BOOTSTRAP_ADMIN_KEYS: keys }),
      run(['verify-bootstrap', 'bootstrap.json']),
    ]);
    expect(fromEnv.code).toBe(0);
    expect(fromFile.code).toBe(0);
    expect(k2.stderr).toMatch(/^oapp: POLICY_SIGNER_THRESHOLD_NOT_MET: /);
    expect(fromFlag.code).toBe(0);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(
      /^oapp: CLI_USAGE: AGENT_BOOTSTRAP_ADMIN_KEYS and AGENT_BOOTSTRAP_ADMIN_KEYS_FILE are both set/,
    );
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^oapp: CLI_USAGE: give the administrators/);
  });

  it('S153: an administrator key as hex on the command line is refused; a file or env://NAME holds it', async () => {
    const r = await run(['verify-bootstrap', 'bootstrap.json', '--admin-key', hex('admin.pub')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oapp: CLI_KEY_ON_COMMAND_LINE: the value of --admin-key /);
    const env = await run(['verify-bootstrap', 'bootstrap.json', '--admin-key', 'env://ADMIN'], {
      ADMIN: hex('admin.pub'),
    });
    expect(env.code).toBe(0);
  });

  it('sign-bootstrap refuses an invalid bootstrap (exit 1) and an encrypted one (exit 2), and writes nothing', async () => {
    writeFileSync(at('invalid.json'), '[{"deploymentId":"d1"}]');
    const invalid = await run(['sign-bootstrap', 'invalid.json', '--sign-key', 'admin.key']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^oapp: WORKFLOW_/);
    expect(existsSync(at('invalid.json.sig'))).toBe(false);
    expect((await run(['encrypt-bootstrap', 'bootstrap.json', '-o', 'plain.enc', ...seal])).code).toBe(0);
    const enc = await run(['sign-bootstrap', 'plain.enc', '--sign-key', 'admin.key']);
    expect(enc.code).toBe(2);
    expect(enc.stderr).toMatch(/^oapp: CLI_USAGE: plain.enc is an encrypted bootstrap/);
    const noKey = await run(['sign-bootstrap', 'bootstrap.json']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/^oapp: CLI_USAGE: .*--sign-key/);
  });
});

/**
 * S173's last case: an encrypted bootstrap made by someone holding only the deployment's secret key (the agent's
 * AGENT_BOOTSTRAP_SECRETKEY). crypto_box's key is the same from either side, so the holder can seal a stanza the
 * agent opens as if the packager had: a bootstrap "from" the deployment to the packager, with the HEADER's
 * packager, the stanza's hint and its HEADER digest rewritten. Without administrator keys the agent takes it.
 */
function forgeWithDeploymentKey(content: string, copyFrom?: Buffer): string {
  const deploymentSecret = parseKey({
    id: 'd',
    purpose: 'authenticated',
    type: 'secret',
    keyHex: hex('agent.key'),
  });
  const packagerPublic = parseKey({
    id: 'p',
    purpose: 'authenticated',
    type: 'public',
    keyHex: hex('packager.pub'),
  });
  // With `copyFrom`, a genuine signed bootstrap: its release, STATEMENT and signature records are copied.
  const genuine = copyFrom === undefined ? undefined : sectionsOf(copyFrom);
  const release = genuine === undefined ? {} : (JSON.parse(genuine[0]!.toString()) as Record<string, never>);
  const pkg = Buffer.from(
    encryptBootstrap(Buffer.from(content), {
      packagerSecretKey: deploymentSecret,
      recipients: [packagerPublic],
      createdAt: release['createdAt'] === undefined ? undefined : new Date(release['createdAt']),
      sequence: release['sequence'],
    }),
    'base64',
  );
  const parts = sectionsOf(pkg);
  let header = parts[0]!.toString('latin1').replace(hex('agent.pub'), hex('packager.pub'));
  if (genuine !== undefined) {
    const sha = (JSON.parse(genuine[1]!.toString()) as { content: { sha256: string } }).content.sha256;
    header = header.replace(/"sha256":"[0-9a-f]{64}"/, `"sha256":"${sha}"`);
  }
  parts[0] = Buffer.from(header, 'latin1');
  if (genuine !== undefined) [parts[1], parts[3]] = [genuine[1]!, genuine[3]!];
  // The stanza re-sealed for the rewritten HEADER, under the hint of the deployment's key.
  const stanza = Buffer.from(parts[2]!);
  const nonce = stanza.subarray(8, 32);
  const k = sodium.crypto_box_beforenm(
    sodium.from_hex(hex('packager.pub')),
    sodium.from_hex(hex('agent.key')),
  );
  const inner = sodium.crypto_box_open_easy_afternm(stanza.subarray(32, 112), nonce, k);
  const digest = createHash('sha256').update(parts[0]).digest();
  Buffer.from(sodium.crypto_box_easy_afternm(Buffer.concat([inner.subarray(0, 32), digest]), nonce, k)).copy(
    stanza,
    32,
  );
  createHash('sha256')
    .update(Buffer.from(hex('agent.pub'), 'hex'))
    .digest()
    .copy(stanza, 0, 0, 8);
  parts[2] = stanza;
  return assemble(pkg.subarray(0, 12), parts).toString('base64');
}

/** The section values of a package (HEADER, STATEMENT, RECIPIENTS, SIGNATURES, PAYLOAD). */
function sectionsOf(pkg: Buffer): Buffer[] {
  const values: Buffer[] = [];
  for (let off = 12; off < pkg.length;) {
    const length = pkg.readUInt32BE(off + 1);
    values.push(pkg.subarray(off + 5, off + 5 + length));
    off += 5 + length;
  }
  return values;
}

/** A package of a frame and section values, tagged 1 to 5 in order. */
function assemble(frame: Buffer, values: Buffer[]): Buffer {
  return Buffer.concat([
    frame,
    ...values.flatMap((v, i) => {
      const head = Buffer.alloc(5);
      head[0] = i + 1;
      head.writeUInt32BE(v.length, 1);
      return [head, v];
    }),
  ]);
}

describe('encrypt-bootstrap --sign-key → verify-bootstrap / decrypt-bootstrap --admin-key (encrypted bootstrap)', () => {
  beforeAll(async () => {
    const r = await run([
      'encrypt-bootstrap',
      'bootstrap.json',
      '-o',
      'signed.enc',
      ...seal,
      '--sign-key',
      'admin.key',
      '--sequence',
      '4',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await run(['encrypt-bootstrap', 'bootstrap.json', '-o', 'unsigned.enc', ...seal])).code).toBe(0);
  });

  it('verify-bootstrap opens it with the agent key tuple and finds the administrator, exit 0', async () => {
    const r = await run(['verify-bootstrap', 'signed.enc', ...opener, '--admin-key', 'admin.pub', '--json']);
    expect(r.stderr).toBe('');
    expect(r.json()).toMatchObject({ ok: true, encrypted: true, sequence: 4, signers: [{ id: 'admin' }] });
    const tuple = { AGENT_BOOTSTRAP_SECRETKEY: `${hex('packager.pub')}/${hex('agent.key')}` };
    const text = await run(['verify-bootstrap', 'signed.enc', '--admin-key', 'admin.pub'], tuple);
    expect(text.out).toMatch(/^verified: bootstrap "signed.enc" \(encrypted\)$/m);
  });

  it('decrypt-bootstrap --admin-key gives the bootstrap of a signed one, refuses an unsigned one (exit 1)', async () => {
    const ok = await run(['decrypt-bootstrap', 'signed.enc', ...opener, '--admin-key', 'admin.pub']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toEqual(BOOTSTRAP);
    const refused = await run(['decrypt-bootstrap', 'unsigned.enc', ...opener, '--admin-key', 'admin.pub']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^oapp: POLICY_SIGNER_THRESHOLD_NOT_MET: /);
    expect(refused.out).toBe('');
  });

  it('S173: unsigned → CLI_BOOTSTRAP_UNSIGNED; signed by another key → POLICY_SIGNER_THRESHOLD_NOT_MET (exit 1)', async () => {
    const unsigned = await run(['verify-bootstrap', 'unsigned.enc', ...opener, '--admin-key', 'admin.pub']);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toMatch(/^oapp: CLI_BOOTSTRAP_UNSIGNED: /);
    expect(
      (
        await run([
          'encrypt-bootstrap',
          'bootstrap.json',
          '-o',
          'other.enc',
          ...seal,
          '--sign-key',
          'other.key',
        ])
      ).code,
    ).toBe(0);
    const other = await run(['verify-bootstrap', 'other.enc', ...opener, '--admin-key', 'admin.pub']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^oapp: POLICY_SIGNER_THRESHOLD_NOT_MET: /);
  });

  it('S173: a byte of the encrypted bootstrap changed → exit 1', async () => {
    const bytes = Buffer.from(readFileSync(at('signed.enc'), 'utf8'), 'base64');
    const positions = [20, bytes.length >> 1, bytes.length - 1];
    const runs = await Promise.all(
      positions.map((i) => {
        const changed = Buffer.from(bytes);
        changed[i] = changed[i]! ^ 0x01;
        writeFileSync(at(`changed-${i}.enc`), changed.toString('base64'));
        return run(['verify-bootstrap', `changed-${i}.enc`, ...opener, '--admin-key', 'admin.pub']);
      }),
    );
    for (const [n, r] of runs.entries()) {
      expect(r.code, `byte ${positions[n]}`).toBe(1);
      expect(r.stderr).toMatch(/^oapp: (FORMAT|CRYPTO|POLICY)_[A-Z_]+: /);
    }
  });

  it('S173: one forged with the deployment’s own secret key: the agent’s tuple opens it, the administrators refuse it', async () => {
    writeFileSync(at('forged.enc'), forgeWithDeploymentKey(JSON.stringify(FORGED)));
    // Without administrator keys it passes for the packager's: that is the attack.
    const opened = await run(['decrypt-bootstrap', 'forged.enc', ...opener]);
    expect(opened.code).toBe(0);
    expect(JSON.parse(opened.out)).toEqual(FORGED);
    const r = await run(['verify-bootstrap', 'forged.enc', ...opener, '--admin-key', 'admin.pub']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: CLI_BOOTSTRAP_UNSIGNED: /);
    const d = await run(['decrypt-bootstrap', 'forged.enc', ...opener, '--admin-key', 'admin.pub']);
    expect(d.code).toBe(1);
    expect(d.out).toBe('');
  });

  it('S173: forged with the deployment’s key around a genuine STATEMENT and its signatures: the records verify, the content does not', async () => {
    const genuine = Buffer.from(readFileSync(at('signed.enc'), 'utf8'), 'base64');
    // The same length as the genuine bootstrap, another package path.
    const content = JSON.stringify(BOOTSTRAP).replace('x.oapp', 'y.oapp');
    const forged = forgeWithDeploymentKey(content, genuine);
    writeFileSync(at('copied.enc'), forged);
    // Read without a key, the administrator's signature is there and valid: a check of the records alone passes.
    const admin = { id: 'admin', publicKey: Buffer.from(hex('admin.pub'), 'hex') };
    const shown = await inspectPackage(Buffer.from(forged, 'base64'), {
      policy: {
        packageId: 'bootstrap',
        packagerIdentities: [],
        requiredSigners: [],
        additionalSigners: [admin],
        requiredAdditionalSignerCount: 0,
      },
    });
    expect(shown.signatures.map((x) => x.status)).toEqual(['trusted']);
    const r = await run(['verify-bootstrap', 'copied.enc', ...opener, '--admin-key', 'admin.pub']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: CRYPTO_CONTENT_MISMATCH: /);
    expect(r.out).toBe('');
  });

  it('--format-version 1 with --sign-key → exit 2, CLI_USAGE (a format 1 bootstrap has no signatures)', async () => {
    const r = await run([
      'encrypt-bootstrap',
      'bootstrap.json',
      ...seal,
      '--sign-key',
      'admin.key',
      '--format-version',
      '1',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oapp: CLI_USAGE: --sign-key: a format 1 bootstrap has no signatures/);
  });
});
