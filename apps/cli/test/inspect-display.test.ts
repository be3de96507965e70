// S178: `oapp inspect` and `oapp verify` show untrusted text in oapp-format's display form (SPEC.md §6.4) and
// never call a signature "valid" without saying whose it is (SPEC.md §6.3). JSON keeps the raw values.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HELLO_WORKFLOW, oapp, tempDir } from './helpers.js';

const dir = tempDir();
const run = (args: string[], input?: string | Uint8Array) => oapp(args, { cwd: dir, input });
const policy = ['--package-id', 'hello-app', '--packager', 'packager.pub', '--required-signer', 'author.pub'];
const BIDI = 'approved \u202etxt.exe\u202c by \u2066QA\u2069';
const ZERO_WIDTH = 'team\u200b-lead\ufeff';
const LICENSE = { 'tier\u202e': 'gold\u200d', note: 'c1\u0085del\u007f' };

beforeAll(async () => {
  for (const k of ['packager', 'deployment']) {
    expect((await run(['keygen', '--purpose', 'authenticated', '-o', `${k}.key`])).code).toBe(0);
  }
  for (const k of ['author', 'stranger']) {
    expect((await run(['keygen', '--purpose', 'sign', '-o', `${k}.key`])).code).toBe(0);
  }
  writeFileSync(join(dir, 'workflow.json'), JSON.stringify(HELLO_WORKFLOW));
  writeFileSync(join(dir, 'license.json'), JSON.stringify(LICENSE));
  const made = await run([
    'package',
    'workflow.json',
    '-o',
    'texts.oapp',
    '--package-id',
    'hello-app',
    '--packager-key',
    'packager.key',
    '--recipient',
    'deployment.pub',
    '--license',
    'license.json',
    '--signer',
    'author.key',
    '--sign-text',
    BIDI,
    '--signer',
    'stranger.key',
    '--sign-text',
    ZERO_WIDTH,
  ]);
  expect(made.stderr).toBe('');
  expect(made.code).toBe(0);
});

const dangerous = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/u;

describe('S178 oapp inspect', () => {
  it('S178 shows sign texts and the license escaped, with no control, bidi or zero-width character', async () => {
    const r = await run(['inspect', 'texts.oapp']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('"approved \\u{202E}txt.exe\\u{202C} by \\u{2066}QA\\u{2069}"');
    expect(r.out).toContain('"team\\u{200B}-lead\\u{FEFF}"');
    expect(r.out).toContain('{"tier\\u{202E}":"gold\\u{200D}","note":"c1\\u{0085}del\\u{007F}"}');
    expect(dangerous.test(r.out)).toBe(false);
    expect([...r.out].filter((c) => c !== '\n' && c.charCodeAt(0) < 0x20)).toEqual([]);
  });

  it('S178 without a policy: every valid signature is an unknown signer, never "valid" alone', async () => {
    const r = await run(['inspect', 'texts.oapp']);
    expect(r.out).toContain('no policy given: every signer is unknown');
    expect(r.out.match(/valid signature, UNKNOWN SIGNER/g)).toHaveLength(2);
    expect(r.out).not.toMatch(/^\s+valid\s*$/m);
  });

  it('S178 with a policy: the named signer is shown with its role and id, the other key as unknown', async () => {
    const r = await run(['inspect', 'texts.oapp', ...policy]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('valid, required signer "author"');
    expect(r.out.match(/valid signature, UNKNOWN SIGNER/g)).toHaveLength(1);
  });

  it('S178 --json keeps the raw values and adds signer, signerId and status (the /workflow-inspect shape grows)', async () => {
    const plain = (await run(['inspect', 'texts.oapp', '--json'])).json();
    expect(plain.license).toEqual(LICENSE);
    expect(plain.signatures).toEqual([
      expect.objectContaining({
        signText: BIDI,
        valid: true,
        signer: 'unknown',
        signerId: null,
        status: 'unknown-signer',
      }),
      expect.objectContaining({
        signText: ZERO_WIDTH,
        valid: true,
        signer: 'unknown',
        signerId: null,
        status: 'unknown-signer',
      }),
    ]);
    const marked = (await run(['inspect', 'texts.oapp', '--json', ...policy])).json();
    expect(
      marked.signatures.map((s: { status: string; signerId: string | null }) => [s.status, s.signerId]),
    ).toEqual([
      ['trusted', 'author'],
      ['unknown-signer', null],
    ]);
  });
});

describe('S178 oapp verify', () => {
  it('S178 names the signers it counted and says how many records of unknown keys it ignored', async () => {
    const r = await run(['verify', 'texts.oapp', ...policy]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('verified: package "hello-app"');
    expect(r.out).toContain('required signers     "author"');
    expect(r.out).toContain(
      'unknown signers      1 record(s) of keys the policy does not name: not verified, not counted',
    );
  });
});
