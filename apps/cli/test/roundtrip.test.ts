import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashWorkflow, compileWorkflow, canonicalize } from '@org/workflow-compiler';
import { beforeAll, describe, expect, it } from 'vitest';
import { filesIn, HELLO_WORKFLOW, oapp, sealOptions, tempDir, writeKeyPair } from './helpers.js';

const dir = tempDir();
const run = (args: string[], input?: string | Uint8Array) => oapp(args, { cwd: dir, input });
const policy = ['--package-id', 'hello-app', '--packager', 'packager.pub', '--required-signer', 'author.pub'];

beforeAll(async () => {
  // The round trip starts with the real keygen: the four key pairs side by side.
  const made = await Promise.all([
    ...['packager', 'deployment', 'agent'].map((k) =>
      run(['keygen', '--purpose', 'authenticated', '-o', `${k}.key`]),
    ),
    run(['keygen', '--purpose', 'sign', '-o', 'author.key']),
  ]);
  for (const r of made) expect(r.code).toBe(0);
  writeFileSync(join(dir, 'workflow.json'), JSON.stringify(HELLO_WORKFLOW));
  const packed = await run([
    'package',
    'workflow.json',
    '-o',
    'hello.oapp',
    ...sealOptions('hello-app', 'release 1'),
  ]);
  expect(packed.stderr).toBe('');
  expect(packed.code).toBe(0);
});

describe('keygen → package → inspect → verify → open', () => {
  it('package is silent and writes the .oapp; --json gives a summary with the workflow hash', async () => {
    const r = await run([
      'package',
      'workflow.json',
      '-o',
      'again.oapp',
      '--json',
      '--package-id',
      'hello-app',
      '--packager-key',
      'packager.key',
      '--recipient',
      'deployment.pub',
    ]);
    expect(r.code).toBe(0);
    const { workflow } = await compileWorkflow(JSON.stringify(HELLO_WORKFLOW), { resourceDirs: [dir] });
    expect(r.json()).toEqual({
      ok: true,
      output: 'again.oapp',
      bytes: statSync(join(dir, 'again.oapp')).size,
      packageId: 'hello-app',
      workflowHash: hashWorkflow(workflow),
      recipients: 1,
      signatures: 0,
      // The release the package says (oapp-format format 2, issue 29): test/release.test.ts has the options.
      formatVersion: 2,
      sequence: expect.any(Number),
      createdAt: expect.any(String),
      expiresAt: null,
    });
  });

  it('inspect shows the package; --json is the /workflow-inspect shape', async () => {
    const text = await run(['inspect', 'hello.oapp']);
    expect(text.code).toBe(0);
    expect(text.out).toContain('hello-app');
    expect(text.out).toContain('"release 1"');
    const r = await run(['inspect', 'hello.oapp', '--json']);
    const j = r.json();
    expect(j).toMatchObject({
      ok: true,
      kind: 'app',
      packageId: 'hello-app',
      format: 'oapp/v2',
      formatVersion: 2,
    });
    expect(j.signatures).toEqual([expect.objectContaining({ signText: 'release 1', valid: true })]);
    expect(j.recipients).toHaveLength(1);
  });

  it('inspect quotes text from the package: no raw control bytes reach the terminal', async () => {
    const evil = '\u001b[2J\u001b]0;owned\u0007id';
    const args = [
      '-o',
      'evil.oapp',
      '--package-id',
      'evil',
      '--packager-key',
      'packager.key',
      '--recipient',
      'deployment.pub',
    ];
    expect(
      (await run(['package', 'workflow.json', ...args, '--signer', 'author.key', '--sign-text', evil])).code,
    ).toBe(0);
    const shown = await run(['inspect', 'evil.oapp']);
    // SPEC.md §6.4 display form (S178): quoted, every control character as \u{XXXX}.
    expect(shown.out).toContain('"\\u{001B}[2J\\u{001B}]0;owned\\u{0007}id"');
    const controls = [...shown.out].filter((c) => c !== '\n' && c.charCodeAt(0) < 0x20);
    expect(controls).toEqual([]);
    // (oapp-format refuses control characters in a packageId itself: FORMAT_BAD_FIELD.)
    const refused = await run([
      'package',
      'workflow.json',
      ...args.slice(0, 2),
      '--package-id',
      evil,
      ...args.slice(4),
    ]);
    expect(refused.stderr).toMatch(/^oapp: FORMAT_BAD_FIELD: packageId: /);
  });

  it('inspect reads the package from stdin with -', async () => {
    const r = await run(['inspect', '-', '--json'], readFileSync(join(dir, 'hello.oapp')));
    expect(r.code).toBe(0);
    expect(r.json().packageId).toBe('hello-app');
  });

  it('verify accepts it under the flags policy (exit 0) and --json names packager and signers', async () => {
    const r = await run(['verify', 'hello.oapp', ...policy, '--json']);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      ok: true,
      packageId: 'hello-app',
      packager: { id: 'packager' },
      signers: { required: [{ id: 'author' }], additional: [], ignored: 0 },
    });
  });

  it('open writes exactly the compiled workflow (JCS), mode 0600', async () => {
    const r = await run(['open', 'hello.oapp', '-o', 'out.json', '--key', 'deployment.key', ...policy]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const { workflow } = await compileWorkflow(JSON.stringify(HELLO_WORKFLOW), { resourceDirs: [dir] });
    expect(readFileSync(join(dir, 'out.json'), 'utf8')).toBe(canonicalize(workflow));
    expect(statSync(join(dir, 'out.json')).mode & 0o777).toBe(0o600);
  });

  it('open - -o - streams stdin to stdout', async () => {
    const r = await run(
      ['open', '-', '-o', '-', '--key', 'deployment.key', ...policy],
      readFileSync(join(dir, 'hello.oapp')),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual(HELLO_WORKFLOW);
  });

  it('open with --json reports output and size', async () => {
    const r = await run([
      'open',
      'hello.oapp',
      '-o',
      'o2.json',
      '--json',
      '--key',
      'deployment.key',
      ...policy,
    ]);
    expect(r.json()).toMatchObject({ ok: true, output: 'o2.json', packageId: 'hello-app' });
    expect(r.json().bytes).toBe(statSync(join(dir, 'o2.json')).size);
  });

  it('open with a key the package was not encrypted for → exit 1, CRYPTO_NO_MATCHING_RECIPIENT, no output', async () => {
    const before = filesIn(dir);
    const r = await run(['open', 'hello.oapp', '-o', 'nope.json', '--key', 'agent.key', ...policy]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: CRYPTO_NO_MATCHING_RECIPIENT: /);
    expect(filesIn(dir)).toEqual(before);
  });

  it('the policy may come from a bootstrap record, whose remoteConfiguration names the package', async () => {
    const hex = (f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8')).keyHex as string;
    const bootstrap = [
      {
        deploymentId: 'hello-1',
        remoteConfiguration: 'hello.oapp',
        packaging: {
          packageId: 'hello-app',
          packagerIdentities: ['packager'],
          requiredSigners: [{ id: 'author' }],
        },
        keys: [
          { id: 'packager', purpose: 'authenticated', type: 'public', keyHex: hex('packager.pub') },
          { id: 'me', purpose: 'authenticated', type: 'secret', keyHex: hex('deployment.key') },
          { id: 'author', purpose: 'sign', type: 'public', keyHex: hex('author.pub') },
        ],
      },
      { deploymentId: 'other', remoteConfiguration: 'x.oapp' },
    ];
    writeFileSync(join(dir, 'bootstrap.json'), JSON.stringify(bootstrap));
    const v = await run(['verify', '--bootstrap', 'bootstrap.json', '--deployment', 'hello-1']);
    expect(v.code).toBe(0);
    expect(v.out).toContain('verified: package "hello-app"');
    const o = await run(['open', '--bootstrap', 'bootstrap.json', '--deployment', 'hello-1', '-o', '-']);
    expect(o.code).toBe(0);
    expect(JSON.parse(o.out)).toEqual(HELLO_WORKFLOW);
    // Two records and no --deployment: a usage error naming them.
    const pick = await run(['verify', '--bootstrap', 'bootstrap.json']);
    expect(pick.code).toBe(2);
    expect(pick.stderr).toMatch(/^oapp: CLI_DEPLOYMENT: .*"hello-1", "other"/);
    // A record without packaging has no policy.
    const none = await run([
      'verify',
      'hello.oapp',
      '--bootstrap',
      'bootstrap.json',
      '--deployment',
      'other',
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^oapp: CLI_DEPLOYMENT: /);
  });
});

describe('verify reports every failed rule', () => {
  beforeAll(() => {
    for (const k of ['stranger', 'extra1', 'extra2']) writeKeyPair(dir, k, 'sign');
  });

  it('wrong packageId, untrusted packager, a missing required signer and an unmet threshold: all four, exit 1', async () => {
    const r = await run([
      'verify',
      'hello.oapp',
      '--package-id',
      'other-app',
      '--packager',
      'agent.pub',
      '--required-signer',
      'author.pub',
      '--required-signer',
      'stranger.pub',
      '--additional-signer',
      'extra1.pub',
      '--additional-signer',
      'extra2.pub',
      '--threshold',
      '1',
      '--json',
    ]);
    expect(r.code).toBe(1);
    const codes = [
      'POLICY_PACKAGE_ID_MISMATCH',
      'POLICY_PACKAGER_NOT_TRUSTED',
      'POLICY_REQUIRED_SIGNER_MISSING',
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    ];
    expect(r.json().ok).toBe(false);
    expect(r.json().errors.map((e: { code: string }) => e.code)).toEqual(codes);
    // One `oapp: CODE: message` line per failed rule on stderr.
    const lines = r.stderr.trim().split('\n');
    expect(lines.map((l) => /^oapp: ([A-Z_]+): /.exec(l)?.[1])).toEqual(codes);
    expect(r.stderr).toContain('"stranger"');
    expect(r.stderr).not.toContain('"author"');
  });

  it('a single failed rule is reported alone', async () => {
    const r = await run(['verify', 'hello.oapp', ...policy.slice(0, 4)]);
    expect(r.code).toBe(0);
    const bad = await run(['verify', 'hello.oapp', '--package-id', 'hello-app', '--packager', 'agent.pub']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^oapp: POLICY_PACKAGER_NOT_TRUSTED: /),
    ]);
  });

  it('a corrupt package is a format error, exit 1', async () => {
    writeFileSync(join(dir, 'junk.oapp'), 'not a package');
    const r = await run(['verify', 'junk.oapp', ...policy]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: FORMAT_BAD_MAGIC: [^\n]*\n$/);
  });
});
